//! Whose credentials go where: a registry's user and password are found by the registry they name
//! ([`credentials`]), and the handshake that turns them into an authorization (`authorize`) sends
//! them to that registry alone.
//!
//! Where credentials come from, for the registry a reference names (`host[:port]`):
//! - `MODHOST_REGISTRY_HOST`, `MODHOST_REGISTRY_USER`, `MODHOST_REGISTRY_PASSWORD`: one registry's,
//!   for a script or CI. A user and password without the host they belong to are refused, never
//!   sent to whichever registry a command names.
//! - `MODHOST_REGISTRY_AUTH`: a credentials file in docker's `config.json` shape (`{"auths":
//!   {"host:port": {"auth": "<base64 of user:password>"}}}`, or `username` and `password`), so the
//!   file `docker login` or `oras login` wrote works as it is when it holds the credentials itself
//!   (a credential helper's entries are not read).
//!
//! What a reader must not break:
//! - **Credentials go to their own registry's origin** (scheme, host, port) and nowhere else: not
//!   to a token service a challenge names on another host or port, unless the credentials name that
//!   token service themselves (`realm` in the file's entry, or `MODHOST_REGISTRY_REALM`); not to
//!   another registry's Basic challenge. oci-client sent them to any realm a registry named, over
//!   any scheme, which is why the handshake is here (the registry module's header says why the
//!   pulls are too).
//! - **Never over plain HTTP** except to a loopback address (where modhost speaks HTTP to a local
//!   registry anyway).
//! - **Every answer is read under a bound** (`read_bounded`): a token answer is small, and a
//!   registry that streams a gigabyte is cut off at the bound, not after buffering it.
//!
//! A registry that needs no credentials gets none, and a token service anywhere may still be asked
//! for an anonymous token (nothing secret goes with it), as docker does.

use anyhow::Context as _;
use reqwest::Url;
use std::path::Path;

/// The largest token answer read: a registry's JWT is a few KiB.
pub(crate) const TOKEN_MAX: usize = 64 << 10;
/// The largest credentials file read.
const FILE_MAX: u64 = 1 << 20;
/// How much of a refusal's body is read for its message.
const REFUSAL_MAX: usize = 4 << 10;

/// A user and password for one registry, and the token service it may use elsewhere, if any.
#[derive(Clone)]
pub struct Credentials {
    /// The registry they are for (`host[:port]`).
    registry: String,
    user: String,
    password: String,
    /// A token service off the registry's origin that may receive them: named by the player, never
    /// by the registry.
    realm: Option<Url>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("registry", &self.registry)
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .field("realm", &self.realm.as_ref().map(Url::as_str))
            .finish()
    }
}

/// The credentials for `registry` (`host[:port]`, as a reference names it), from the environment;
/// none when nothing names this registry. An error is one line naming the variable or the file.
pub fn credentials(registry: &str) -> anyhow::Result<Option<Credentials>> {
    lookup(registry, |name| std::env::var(name).ok().filter(|v| !v.is_empty()))
}

fn lookup(registry: &str, var: impl Fn(&str) -> Option<String>) -> anyhow::Result<Option<Credentials>> {
    let wanted = key(registry);
    let (user, password) = (var("MODHOST_REGISTRY_USER"), var("MODHOST_REGISTRY_PASSWORD"));
    match var("MODHOST_REGISTRY_HOST") {
        None if user.is_some() || password.is_some() => anyhow::bail!(
            "MODHOST_REGISTRY_USER or MODHOST_REGISTRY_PASSWORD is set, but MODHOST_REGISTRY_HOST does not name the \
             registry they are for: credentials go to their own registry alone"
        ),
        Some(host) if key(&host) == wanted => {
            let (Some(user), Some(password)) = (user, password) else {
                anyhow::bail!("MODHOST_REGISTRY_HOST names {host}, but MODHOST_REGISTRY_USER or _PASSWORD is not set")
            };
            let realm = var("MODHOST_REGISTRY_REALM").map(|r| named_realm(&r, "MODHOST_REGISTRY_REALM")).transpose()?;
            return Ok(Some(Credentials { registry: registry.to_owned(), user, password, realm }));
        }
        _ => {}
    }
    match var("MODHOST_REGISTRY_AUTH") {
        Some(file) => from_file(Path::new(&file), registry),
        None => Ok(None),
    }
}

/// A registry as a credentials key: `host[:port]`, lowercase, without the scheme or path docker's
/// file may give it (`https://index.docker.io/v1/`).
fn key(text: &str) -> String {
    let bare = text.trim().trim_start_matches("https://").trim_start_matches("http://");
    bare.split('/').next().unwrap_or_default().to_ascii_lowercase()
}

/// A token service the player names for a registry's credentials: HTTPS, or HTTP to a loopback address.
fn named_realm(text: &str, whence: &str) -> anyhow::Result<Url> {
    let url = Url::parse(text).map_err(|e| anyhow::anyhow!("{whence}: `{text}` is not a URL ({e})"))?;
    anyhow::ensure!(
        plain_http_refusal(&url).is_none(),
        "{whence}: `{text}` is not HTTPS: credentials go over HTTPS (plain HTTP only to a loopback address)"
    );
    Ok(url)
}

/// The entry for `registry` in a credentials file of docker's `config.json` shape.
fn from_file(path: &Path, registry: &str) -> anyhow::Result<Option<Credentials>> {
    use std::io::Read as _;
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        auths: std::collections::BTreeMap<String, Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        auth: Option<String>,
        username: Option<String>,
        password: Option<String>,
        realm: Option<String>,
    }
    let shown = path.display();
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(FILE_MAX).read_to_string(&mut text))
        .with_context(|| format!("reading the credentials file {shown} (MODHOST_REGISTRY_AUTH)"))?;
    let file: File = serde_json::from_str(&text).with_context(|| format!("the credentials file {shown}"))?;
    let wanted = key(registry);
    let Some(entry) = file.auths.into_iter().find(|(k, _)| key(k) == wanted).map(|(_, e)| e) else {
        return Ok(None);
    };
    let (user, password) = match (entry.auth, entry.username, entry.password) {
        (_, Some(user), Some(password)) => (user, password),
        (Some(auth), ..) => {
            use base64::Engine as _;
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(auth.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .with_context(|| format!("{shown}: the `auth` of {registry} is not base64 of `user:password`"))?;
            let (user, password) = decoded
                .split_once(':')
                .with_context(|| format!("{shown}: the `auth` of {registry} is not base64 of `user:password`"))?;
            (user.to_owned(), password.to_owned())
        }
        _ => anyhow::bail!(
            "{shown}: the entry for {registry} holds no user and password (a credential helper's entries are not read)"
        ),
    };
    let whence = format!("{shown}: the `realm` of {registry}");
    let realm = entry.realm.map(|r| named_realm(&r, &whence)).transpose()?;
    Ok(Some(Credentials { registry: registry.to_owned(), user, password, realm }))
}

/// Why credentials may not go over `url`'s scheme, if they may not: only HTTPS, or HTTP to a
/// loopback address, carries them.
fn plain_http_refusal(url: &Url) -> Option<&'static str> {
    match url.scheme() {
        "https" => None,
        "http" if url.host_str().is_some_and(is_loopback) => None,
        "http" => Some("over plain HTTP"),
        _ => Some("not over HTTP(S)"),
    }
}

/// Whether `host` (a URL's host, IPv6 in brackets) is this machine: `localhost` or a loopback address.
pub(crate) fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost") || bare.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Scheme, host and port: what must match for two URLs to be the same server.
fn origin(url: &Url) -> (&str, Option<&str>, Option<u16>) {
    (url.scheme(), url.host_str(), url.port_or_known_default())
}

/// Why the credentials for the registry at `registry` may not go to the token service `to`, if they
/// may not: it must be the registry's own origin, or the token service the credentials name, and
/// reached over HTTPS (or HTTP to a loopback address).
pub(crate) fn credentials_refusal(registry: &Url, to: &Url, named: Option<&Url>) -> Option<String> {
    if let Some(why) = plain_http_refusal(to) {
        return Some(format!("{why}: credentials go over HTTPS (plain HTTP only to a loopback address)"));
    }
    let own = origin(to) == origin(registry);
    let named = named.is_some_and(|n| origin(n) == origin(to) && n.path() == to.path());
    match own || named {
        true => None,
        false => Some(format!(
            "which is not {} itself: its credentials go to it alone (a token service of its own elsewhere is named \
             with them: `realm` in its MODHOST_REGISTRY_AUTH entry, or MODHOST_REGISTRY_REALM)",
            registry.host_str().map_or_else(
                || registry.to_string(),
                |h| match registry.port() {
                    Some(port) => format!("{h}:{port}"),
                    None => h.to_owned(),
                }
            )
        )),
    }
}

/// What the requests to one registry carry, from the handshake.
#[derive(Clone)]
pub(crate) enum Authorization {
    /// Nothing: the registry asked for nothing.
    Anonymous,
    /// The registry's own Basic challenge, answered with its own credentials.
    Basic(Credentials),
    /// A token from its token service.
    Bearer(String),
}

impl Authorization {
    /// `request` with this authorization.
    pub(crate) fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Authorization::Anonymous => request,
            Authorization::Basic(c) => request.basic_auth(&c.user, Some(&c.password)),
            Authorization::Bearer(token) => request.bearer_auth(token),
        }
    }

    /// The same for oci-client, which then never runs a handshake of its own: a token as its
    /// `Bearer` auth (used as it is), Basic credentials as its cached Basic token for `reference`,
    /// which it sends to the registry's own host only (its `apply_auth` checks that).
    pub(crate) async fn hand_to(
        &self,
        client: &oci_client::Client,
        reference: &oci_client::Reference,
    ) -> oci_client::secrets::RegistryAuth {
        use oci_client::RegistryOperation;
        use oci_client::secrets::RegistryAuth;
        use oci_client::token_cache::RegistryTokenType;
        match self {
            Authorization::Anonymous => RegistryAuth::Anonymous,
            Authorization::Bearer(token) => RegistryAuth::Bearer(token.clone()),
            Authorization::Basic(c) => {
                client.store_auth_if_needed(reference.resolve_registry(), &RegistryAuth::Anonymous).await;
                for operation in [RegistryOperation::Pull, RegistryOperation::Push] {
                    let token = RegistryTokenType::Basic(c.user.clone(), c.password.clone());
                    client.tokens.insert(reference, operation, token).await;
                }
                RegistryAuth::Anonymous
            }
        }
    }
}

/// A `WWW-Authenticate` challenge, as far as modhost answers one.
#[derive(Debug, PartialEq)]
enum Challenge {
    Bearer { realm: String, service: Option<String> },
    Basic,
    Other(String),
}

fn parse_challenge(header: &str) -> Challenge {
    let mut other = None;
    let mut basic = false;
    for challenge in http_auth::ChallengeParser::new(header).flatten() {
        if challenge.scheme.eq_ignore_ascii_case("bearer") {
            let param = |name: &str| {
                challenge.params.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.to_unescaped())
            };
            if let Some(realm) = param("realm") {
                return Challenge::Bearer { realm, service: param("service") };
            }
        } else if challenge.scheme.eq_ignore_ascii_case("basic") {
            basic = true;
        } else {
            other.get_or_insert_with(|| challenge.scheme.to_owned());
        }
    }
    match (basic, other) {
        (true, _) => Challenge::Basic,
        (false, other) => Challenge::Other(other.unwrap_or_else(|| header.chars().take(64).collect())),
    }
}

/// The handshake with the registry at `base` (`registry`, as a reference names it) for `scope`
/// (`repository:<repo>:pull` or `…:pull,push`): `GET /v2/`, and what its challenge asks for.
/// `credentials` are the ones for this registry ([`credentials`]), if any.
pub(crate) async fn authorize(
    http: &reqwest::Client,
    base: &Url,
    registry: &str,
    scope: &str,
    credentials: Option<&Credentials>,
) -> anyhow::Result<Authorization> {
    let probe = base.join("/v2/")?;
    let answer = http.get(probe).send().await.with_context(|| format!("reaching the registry {registry}"))?;
    let status = answer.status();
    let header = answer.headers().get(reqwest::header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok());
    let header = header.map(str::to_owned);
    drop(answer); // its body says nothing modhost needs, and is never read
    if status.is_success() {
        return Ok(Authorization::Anonymous);
    }
    anyhow::ensure!(
        status == reqwest::StatusCode::UNAUTHORIZED,
        "{registry} is not an OCI registry: GET /v2/ answered {status}"
    );
    let header = header.with_context(|| format!("{registry} answered 401 with no challenge (WWW-Authenticate)"))?;
    match parse_challenge(&header) {
        Challenge::Bearer { realm, service } => {
            let realm =
                Url::parse(&realm).ok().filter(|u| matches!(u.scheme(), "http" | "https")).with_context(|| {
                    format!("{registry}'s challenge names the token service `{realm}`, which is not a URL")
                })?;
            let send = match credentials {
                Some(c) => match credentials_refusal(base, &realm, c.realm.as_ref()) {
                    Some(why) => anyhow::bail!(
                        "refused: {registry}'s challenge names the token service {}, {why}",
                        realm.as_str().split('?').next().unwrap_or_default()
                    ),
                    None => Some(c),
                },
                None => None,
            };
            let mut url = realm.clone();
            url.query_pairs_mut().append_pair("scope", scope);
            if let Some(service) = &service {
                url.query_pairs_mut().append_pair("service", service);
            }
            let mut request = http.get(url);
            if let Some(c) = send {
                request = request.basic_auth(&c.user, Some(&c.password));
            }
            let answer = request.send().await.with_context(|| format!("reaching {registry}'s token service"))?;
            let answer = refusal(answer, &format!("{registry}'s token service")).await?;
            let body = read_bounded(answer, TOKEN_MAX, &format!("{registry}: its token answer")).await?;
            #[derive(serde::Deserialize)]
            struct Token {
                token: Option<String>,
                access_token: Option<String>,
            }
            let token: Token = serde_json::from_slice(&body)
                .with_context(|| format!("{registry}'s token service answered something other than a token"))?;
            let token = token.token.or(token.access_token).filter(|t| !t.is_empty());
            Ok(Authorization::Bearer(token.with_context(|| format!("{registry}'s token service answered no token"))?))
        }
        Challenge::Basic => match credentials {
            Some(c) => Ok(Authorization::Basic(c.clone())),
            None => anyhow::bail!(
                "{registry} asks for a user and password, and none is set for it (MODHOST_REGISTRY_AUTH, or \
                 MODHOST_REGISTRY_HOST with _USER and _PASSWORD)"
            ),
        },
        Challenge::Other(scheme) => {
            anyhow::bail!("{registry} asks for `{scheme}` authentication, which modhost does not speak")
        }
    }
}

/// `answer` when it succeeded; otherwise an error with its status and, from the first few KiB of
/// its body, the registry's own error codes.
pub(crate) async fn refusal(answer: reqwest::Response, what: &str) -> anyhow::Result<reqwest::Response> {
    let status = answer.status();
    if status.is_success() {
        return Ok(answer);
    }
    let body = read_prefix(answer, REFUSAL_MAX).await;
    #[derive(serde::Deserialize)]
    struct Envelope {
        errors: Vec<Error>,
    }
    #[derive(serde::Deserialize)]
    struct Error {
        code: String,
        #[serde(default)]
        message: String,
    }
    let said = serde_json::from_slice::<Envelope>(&body)
        .map(|e| e.errors.iter().map(|e| format!("{} {}", e.code, e.message).trim().to_owned()).collect::<Vec<_>>())
        .map(|said| format!(": {}", said.join("; ")))
        .unwrap_or_default();
    let said: String = said.chars().filter(|c| !c.is_control()).take(300).collect();
    anyhow::bail!("{what} answered {status}{said}")
}

/// The first `limit` bytes of a body, or fewer; the rest is never read.
async fn read_prefix(mut answer: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match answer.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk[..chunk.len().min(limit - body.len())]),
            _ => break,
        }
    }
    body
}

/// A whole body of at most `limit` bytes: refused, before more is read, when its length says it is
/// larger or once it has sent more. `what` names it in the refusal (`…: its manifest answer`).
pub(crate) async fn read_bounded(mut answer: reqwest::Response, limit: usize, what: &str) -> anyhow::Result<Vec<u8>> {
    let over = || {
        anyhow::anyhow!(
            "{what} is over {}, the most modhost reads of one: refused without reading the rest",
            size(limit)
        )
    };
    if answer.content_length().is_some_and(|n| n > limit as u64) {
        return Err(over());
    }
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.with_context(|| format!("reading {what}"))? {
        if body.len() + chunk.len() > limit {
            return Err(over());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `n` bytes in words: `4 MiB`, `64 KiB`.
fn size(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn credentials_go_to_their_registrys_own_origin_over_https_or_loopback_alone() {
        let registry = url("https://registry.example");
        let refused = |to: &str, named: Option<&str>| credentials_refusal(&registry, &url(to), named.map(url).as_ref());
        assert_eq!(refused("https://registry.example/token?x=1", None), None, "its own origin");
        assert_eq!(refused("https://registry.example:443/token", None), None, "the same port, spelled");
        for elsewhere in
            ["https://auth.example/token", "https://registry.example:8443/token", "https://registry.example.evil/t"]
        {
            assert!(refused(elsewhere, None).unwrap().contains("not registry.example itself"), "{elsewhere}");
        }
        assert!(refused("http://registry.example/token", None).unwrap().contains("plain HTTP"), "a downgrade");
        assert!(refused("ftp://registry.example/token", None).is_some());
        // A token service the player named with the credentials, and only that one.
        let named = Some("https://auth.example/token");
        assert_eq!(refused("https://auth.example/token?scope=x", named), None);
        assert!(refused("https://auth.example/other", named).is_some());
        assert!(refused("http://auth.example/token", Some("http://auth.example/token")).is_some(), "never plain");

        // A registry on this machine: plain HTTP, on its own port only.
        let local = url("http://127.0.0.1:5000");
        let refused = |to: &str| credentials_refusal(&local, &url(to), None);
        assert_eq!(refused("http://127.0.0.1:5000/token"), None);
        assert!(refused("http://127.0.0.1:5001/token").is_some(), "another port");
        assert!(refused("http://localhost:5000/token").is_some(), "another name");
        assert!(refused("http://10.0.0.1:5000/token").unwrap().contains("plain HTTP"));
    }

    /// The environment `lookup` reads, as name-value pairs.
    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn credentials_are_found_by_the_registry_they_name_and_only_there() {
        let env = [
            ("MODHOST_REGISTRY_HOST", "Registry.Example:5000"),
            ("MODHOST_REGISTRY_USER", "me"),
            ("MODHOST_REGISTRY_PASSWORD", "pw"),
        ];
        let found = lookup("registry.example:5000", vars(&env)).unwrap().unwrap();
        assert_eq!((found.user.as_str(), found.password.as_str()), ("me", "pw"));
        assert!(lookup("registry.example", vars(&env)).unwrap().is_none(), "another port is another registry");
        assert!(lookup("hostile.example:5000", vars(&env)).unwrap().is_none());
        assert!(!format!("{found:?}").contains("pw"), "never printed");

        let unnamed = [("MODHOST_REGISTRY_USER", "me"), ("MODHOST_REGISTRY_PASSWORD", "pw")];
        let error = lookup("registry.example", vars(&unnamed)).unwrap_err().to_string();
        assert!(error.contains("MODHOST_REGISTRY_HOST does not name"), "{error}");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.json");
        std::fs::write(
            &file,
            r#"{"auths": {"https://index.docker.io/v1/": {"auth": "ZG9ja2VyOmh1Yg=="},
                          "own.example": {"username": "u", "password": "p:with:colons", "realm": "https://auth.example/t"},
                          "helper.example": {}}}"#,
        )
        .unwrap();
        let path = file.display().to_string();
        let env = [("MODHOST_REGISTRY_AUTH", path.as_str())];
        let docker = lookup("index.docker.io", vars(&env)).unwrap().unwrap();
        assert_eq!((docker.user.as_str(), docker.password.as_str()), ("docker", "hub"));
        let own = lookup("own.example", vars(&env)).unwrap().unwrap();
        assert_eq!(own.password, "p:with:colons");
        assert_eq!(own.realm.as_ref().map(Url::as_str), Some("https://auth.example/t"));
        assert!(lookup("other.example", vars(&env)).unwrap().is_none());
        let error = lookup("helper.example", vars(&env)).unwrap_err().to_string();
        assert!(error.contains("holds no user and password"), "{error}");
    }

    #[test]
    fn a_challenge_is_read_for_its_scheme_realm_and_service() {
        assert_eq!(
            parse_challenge(r#"Bearer realm="https://auth.example/token",service="registry.example",scope="x""#),
            Challenge::Bearer { realm: "https://auth.example/token".into(), service: Some("registry.example".into()) }
        );
        assert_eq!(parse_challenge(r#"Basic realm="registry""#), Challenge::Basic);
        assert_eq!(parse_challenge("Negotiate"), Challenge::Other("Negotiate".into()));
    }
}
