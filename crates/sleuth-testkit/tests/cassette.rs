//! The replay server sends recorded responses as they were, in order.

use serde_json::{json, Value};
use sleuth_testkit::{Cassette, MockServer};

#[tokio::test]
async fn recorded_statuses_headers_and_bodies_are_replayed_in_order_then_run_out() {
    let cassette = Cassette::load("openai-429-retry-after");
    assert_eq!(
        (cassette.provider.as_str(), cassette.origin.as_str()),
        ("openai", "documented")
    );
    let server = MockServer::start(cassette.replay()).await;
    let client = reqwest::Client::new();
    let post = || {
        client
            .post(format!("{}/chat/completions", server.url()))
            .json(&json!({"model": "gpt-4o", "messages": []}))
            .send()
    };
    let limited = post().await.unwrap();
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.headers()["retry-after"], "1");
    let body: Value = limited.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    let ok = post().await.unwrap();
    assert_eq!(ok.status(), 200);
    let body: Value = ok.json().await.unwrap();
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    let past_the_end = post().await.unwrap();
    assert_eq!(past_the_end.status(), 500);
    assert!(past_the_end
        .text()
        .await
        .unwrap()
        .contains("has no response 3"));
}

#[test]
fn every_cassette_loads_and_none_carries_a_credential() {
    let names = Cassette::names();
    assert!(names.len() >= 20);
    for name in names {
        let c = Cassette::load(&name);
        for r in &c.responses {
            assert!((100..600).contains(&r.status), "{name}");
            for (header, _) in &r.headers {
                let h = header.to_ascii_lowercase();
                assert!(
                    ![
                        "authorization",
                        "x-api-key",
                        "set-cookie",
                        "openai-organization"
                    ]
                    .contains(&h.as_str()),
                    "{name}: {header}"
                );
            }
        }
    }
}
