//! The baseline for `tests/bench/wrk.sh`: a raw hyper HTTP/1.1 server answering a small JSON envelope,
//! built the way modhost's front is (tokio multi-thread runtime, http1 with a timer, keep-alive), so the
//! difference in a benchmark is what modhost adds: routing, sessions, the wasm call, the envelope.
//!
//! Run with `cargo run --release -p modhost-benches --bin hyper-hello -- <port>`.

use bytes_body::full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::time::Duration;
use tokio::net::TcpListener;

mod bytes_body {
    pub(crate) fn full(text: &'static str) -> http_body_util::Full<hyper::body::Bytes> {
        http_body_util::Full::new(hyper::body::Bytes::from_static(text.as_bytes()))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let port: u16 = std::env::args().nth(1).map(|p| p.parse()).transpose()?.unwrap_or(0);
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(Duration::from_secs(3)).keep_alive(true);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let connection = builder.serve_connection(
            TokioIo::new(stream),
            service_fn(|_request| async {
                let mut response = hyper::Response::new(full(r#"{"err":0,"errmsg":null,"data":"hello"}"#));
                response
                    .headers_mut()
                    .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
                Ok::<_, Infallible>(response)
            }),
        );
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
}
