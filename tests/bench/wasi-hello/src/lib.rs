//! The smallest `wasi:http` proxy: every request is answered 200 with the JSON envelope `hyper-hello`
//! answers (`tests/bench/src/bin/hyper-hello.rs`), so `wrk.sh` compares servers on the same bytes.

use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

wasip2::http::proxy::export!(Hello);

struct Hello;

const BODY: &[u8] = br#"{"err":0,"errmsg":null,"data":"hello"}"#;

impl wasip2::exports::http::incoming_handler::Guest for Hello {
    fn handle(_request: IncomingRequest, out: ResponseOutparam) {
        let headers = Fields::from_list(&[
            ("content-type".to_owned(), b"application/json".to_vec()),
            ("content-length".to_owned(), BODY.len().to_string().into_bytes()),
        ])
        .expect("valid headers");
        let response = OutgoingResponse::new(headers);
        let body = response.body().expect("the body is taken once");
        ResponseOutparam::set(out, Ok(response));
        let stream = body.write().expect("the stream is taken once");
        stream.blocking_write_and_flush(BODY).expect("the host takes the body");
        drop(stream);
        OutgoingBody::finish(body, None).expect("the body is complete");
    }
}
