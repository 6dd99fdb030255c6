//! Every accepted and rejected `SpiffeId` form (SPIFFE ID specification §2), with exact errors.

use server_identity::{SpiffeId, SpiffeIdError};

#[test]
fn accepted_ids_and_their_parts() {
    let cases = [
        (
            "spiffe://corp.example/salesforce/mcp-server",
            "corp.example",
            "/salesforce/mcp-server",
        ),
        ("spiffe://corp.example", "corp.example", ""),
        (
            "spiffe://a-b_c.0/Path.With-Caps_9",
            "a-b_c.0",
            "/Path.With-Caps_9",
        ),
        ("spiffe://td/...", "td", "/..."),
        ("spiffe://td/a/.b/c..", "td", "/a/.b/c.."),
    ];
    for (text, domain, path) in cases {
        let id: SpiffeId = text.parse().unwrap();
        assert_eq!(id.trust_domain(), domain);
        assert_eq!(id.path(), path);
        assert_eq!(id.to_string(), text);
        assert_eq!(id.as_str(), text);
    }
    let longest = format!("spiffe://td/{}", "a".repeat(2048 - "spiffe://td/".len()));
    assert_eq!(longest.parse::<SpiffeId>().unwrap().as_str().len(), 2048);
    let long_domain = format!("spiffe://{}/x", "d".repeat(255));
    assert_eq!(
        long_domain
            .parse::<SpiffeId>()
            .unwrap()
            .trust_domain()
            .len(),
        255
    );
}

fn error(text: &str) -> SpiffeIdError {
    text.parse::<SpiffeId>().unwrap_err()
}

#[test]
fn rejected_ids_have_exact_errors() {
    use SpiffeIdError::*;
    assert_eq!(error(""), Empty);
    assert_eq!(
        error("SPIFFE://td/a"),
        WrongScheme {
            presented: "SPIFFE://td/a".to_owned()
        }
    );
    assert_eq!(
        error("https://td/a"),
        WrongScheme {
            presented: "https://td/a".to_owned()
        }
    );
    assert_eq!(
        error("spiffe:/td/a"),
        WrongScheme {
            presented: "spiffe:/td/a".to_owned()
        }
    );
    assert_eq!(error("spiffe://"), MissingTrustDomain);
    assert_eq!(error("spiffe:///a"), MissingTrustDomain);
    assert_eq!(
        error("spiffe://Corp.example/a"),
        TrustDomainCharacter {
            character: 'C',
            position: 9
        }
    );
    assert_eq!(
        error("spiffe://corp example/a"),
        TrustDomainCharacter {
            character: ' ',
            position: 13
        }
    );
    assert_eq!(
        error("spiffe://corp.exämple/a"),
        TrustDomainCharacter {
            character: 'ä',
            position: 16
        }
    );
    assert_eq!(error("spiffe://td:8443/a"), Port);
    assert_eq!(error("spiffe://user@td/a"), UserInfo);
    assert_eq!(error("spiffe://td/a?x=1"), Query);
    assert_eq!(error("spiffe://td/a#frag"), Fragment);
    assert_eq!(error("spiffe://td/a%20b"), PercentEncoding { position: 13 });
    assert_eq!(error("spiffe://td/a//b"), EmptySegment { position: 14 });
    assert_eq!(error("spiffe://td//a"), EmptySegment { position: 12 });
    assert_eq!(
        error("spiffe://td/./a"),
        DotSegment {
            segment: ".".to_owned(),
            position: 12
        }
    );
    assert_eq!(
        error("spiffe://td/a/.."),
        DotSegment {
            segment: "..".to_owned(),
            position: 14
        }
    );
    assert_eq!(error("spiffe://td/"), TrailingSlash);
    assert_eq!(error("spiffe://td/a/"), TrailingSlash);
    assert_eq!(
        error("spiffe://td/a b"),
        PathCharacter {
            character: ' ',
            position: 13
        }
    );
    assert_eq!(
        error("spiffe://td/a:b"),
        PathCharacter {
            character: ':',
            position: 13
        }
    );
    assert_eq!(
        error("spiffe://td/a@b"),
        PathCharacter {
            character: '@',
            position: 13
        }
    );
    assert_eq!(
        error("spiffe://td/é"),
        PathCharacter {
            character: 'é',
            position: 12
        }
    );
    let too_long = format!("spiffe://td/{}", "a".repeat(2049 - "spiffe://td/".len()));
    assert_eq!(error(&too_long), TooLong { length: 2049 });
    let long_domain = format!("spiffe://{}/x", "d".repeat(256));
    assert_eq!(error(&long_domain), TrustDomainTooLong { length: 256 });
}

#[test]
fn error_messages_say_what_to_do() {
    assert_eq!(
        error("spiffe://td:8443/a").to_string(),
        "SPIFFE ID must not carry a port: remove `:…` after the trust domain"
    );
    assert_eq!(
        error("spiffe://Corp/a").to_string(),
        "SPIFFE ID trust domain has `C` at byte 9: only lowercase letters, digits, `.`, `-` and \
         `_` are allowed"
    );
}
