//! Push: messages to players' game clients over the SPT notifier websocket.
