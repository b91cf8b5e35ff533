// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./interfaces/modhost-plugin-config.d.ts" />
/// <reference path="./interfaces/modhost-plugin-db.d.ts" />
/// <reference path="./interfaces/modhost-plugin-guest.d.ts" />
/// <reference path="./interfaces/modhost-plugin-log.d.ts" />
/// <reference path="./interfaces/modhost-plugin-mods.d.ts" />
/// <reference path="./interfaces/modhost-plugin-push.d.ts" />
/// <reference path="./interfaces/modhost-plugin-realtime.d.ts" />
/// <reference path="./interfaces/modhost-plugin-sockets.d.ts" />
/// <reference path="./interfaces/modhost-plugin-store.d.ts" />
/// <reference path="./interfaces/modhost-plugin-timers.d.ts" />
/// <reference path="./interfaces/modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/full@0.1.2' {
  export type Request = import('modhost:plugin/types@0.1.2').Request;
  export type Response = import('modhost:plugin/types@0.1.2').Response;
  export type Route = import('modhost:plugin/types@0.1.2').Route;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
  export type * as ModhostPluginConfig012 from 'modhost:plugin/config@0.1.2'; // import modhost:plugin/config@0.1.2
  export type * as ModhostPluginDb012 from 'modhost:plugin/db@0.1.2'; // import modhost:plugin/db@0.1.2
  export type * as ModhostPluginLog012 from 'modhost:plugin/log@0.1.2'; // import modhost:plugin/log@0.1.2
  export type * as ModhostPluginMods012 from 'modhost:plugin/mods@0.1.2'; // import modhost:plugin/mods@0.1.2
  export type * as ModhostPluginPush012 from 'modhost:plugin/push@0.1.2'; // import modhost:plugin/push@0.1.2
  export type * as ModhostPluginSockets012 from 'modhost:plugin/sockets@0.1.2'; // import modhost:plugin/sockets@0.1.2
  export type * as ModhostPluginStore012 from 'modhost:plugin/store@0.1.2'; // import modhost:plugin/store@0.1.2
  export type * as ModhostPluginTimers012 from 'modhost:plugin/timers@0.1.2'; // import modhost:plugin/timers@0.1.2
  export type * as ModhostPluginTypes012 from 'modhost:plugin/types@0.1.2'; // import modhost:plugin/types@0.1.2
  export * as guest from 'modhost:plugin/guest@0.1.2'; // export modhost:plugin/guest@0.1.2
  export * as realtime from 'modhost:plugin/realtime@0.1.2'; // export modhost:plugin/realtime@0.1.2
  /**
  * The routes this mod answers. Called once at load, before `init`; the answer is fixed for the life
  * of the loaded mod.
  */
  export function routes(): Array<Route>;
  /**
  * Called once at load, in load order, before any request. May read and patch the db. An error (or a
  * trap) disables the mod, and the host says why.
  */
  export function init(): void;
  /**
  * Answer one request. Each call runs in a fresh instance (unless the mod's manifest opts in to reuse),
  * so nothing survives in the guest from one request to the next: state lives in the db and the store.
  * An error answers the HTTP status its case names in `types.error` ("answers 404"), with a JSON
  * body naming the mod and the reason: the mod's own word about the request (not there, malformed,
  * not allowed) reaches the client as a 4xx, not as a server failure. A trap answers 500.
  */
  export function handle(request: Request): Response;
  export type Result<T, E> = { tag: 'ok', val: T } | { tag: 'err', val: E };
}
