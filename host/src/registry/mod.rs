//! Mod packages in an OCI registry, the convention the wasm ecosystem uses (`wkg`, wasm-pkg-tools):
//! a package is an artifact of one layer (the `.modhost` file) whose config is its
//! `modhost-package.json`, and a mod's versions are its repository's tags.
//!
//! Pushing (`modhost publish`, to the author's own registry) goes through `oci-client` (the ORAS
//! project's): chunked and monolithic uploads. What modhost reads from a registry, which may be
//! anyone's (`install`, `outdated`, `update`), is read here, over `reqwest` (the client oci-client
//! itself is built on): the manifest, the tag list, and the layer, each under a bound and checked
//! against its digest. oci-client cannot be made to do that: it builds its HTTP client privately and
//! reads every manifest, tag list, token and error answer whole (`bytes()`, `text()`), so a registry
//! streaming a gigabyte took the CLI to 2 GiB; and its handshake sent Basic credentials to whatever
//! token realm a registry named, on any host and over plain HTTP. The handshake is [`auth`]'s,
//! for both directions: oci-client is handed its outcome and runs none of its own.
//!
//! On top of the digests, the layer's size is checked against the package limit before it is
//! fetched, and the package's own manifest of hashes is checked as it is read
//! ([`Package::from_bytes`]).
//!
//! A registry on a loopback address is spoken to over plain HTTP (as Docker treats `localhost`
//! registries); every other one over HTTPS. Credentials are per registry ([`auth`]).

pub mod auth;

use anyhow::Context as _;
use auth::Authorization;
use modhost_mods::Package;
use modhost_mods::package::MAX_TOTAL;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use oci_client::{Client, Reference};
use reqwest::Url;
use std::time::Duration;

/// The largest manifest read: the size the distribution spec has registries accept at least. A
/// package's is under 1 KiB.
pub const MANIFEST_MAX: usize = 4 << 20;
/// The largest tag list read (one page).
const TAGS_MAX: usize = 4 << 20;
/// How long a connection may take to open, and a read to wait for the next bytes: a registry that
/// stops sending is given up on, never waited for.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// The manifest types asked for: a package is an OCI image manifest (docker's for older registries).
const MANIFEST_ACCEPT: &str =
    "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";

/// The media type of a package's one layer.
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.modhost.package.v1.tar+gzip";
/// The media type of its config: the package's `modhost-package.json`.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.modhost.package.config.v1+json";

/// Whether `text` names an OCI artifact rather than a local path: `oci://…`, or `host[:port]/repo…`
/// with no file or folder of that name.
pub fn is_reference(text: &str) -> bool {
    text.starts_with("oci://")
        || (!std::path::Path::new(text).exists()
            && text
                .split('/')
                .next()
                .is_some_and(|host| host.contains('.') || host.contains(':') || host == "localhost")
            && text.contains('/'))
}

/// Parses a reference (`oci://` optional); a missing tag is an error, since a mod's version is its tag.
pub fn parse(text: &str) -> anyhow::Result<Reference> {
    let bare = text.strip_prefix("oci://").unwrap_or(text);
    let reference: Reference = bare.parse().with_context(|| format!("`{text}` is not an OCI reference"))?;
    Ok(reference)
}

/// The same repository at another tag.
pub fn at_tag(reference: &Reference, tag: &str) -> Reference {
    Reference::with_tag(reference.registry().to_owned(), reference.repository().to_owned(), tag.to_owned())
}

/// Where a registry is: `http://host:port` on a loopback address, `https://host[:port]` elsewhere.
fn base(reference: &Reference) -> anyhow::Result<Url> {
    let registry = reference.resolve_registry();
    let host = match registry.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => registry,
    };
    let scheme = if auth::is_loopback(host) { "http" } else { "https" };
    Url::parse(&format!("{scheme}://{registry}")).with_context(|| format!("`{registry}` is not a registry's address"))
}

/// One command's way to one registry: the address, an HTTP client with deadlines, and what the
/// handshake got ([`auth::authorize`]) for the scope asked.
struct Session {
    http: reqwest::Client,
    base: Url,
    authorization: Authorization,
}

impl Session {
    /// The handshake with `reference`'s registry for `actions` (`pull` or `pull,push`) on its repository.
    async fn open(reference: &Reference, actions: &str) -> anyhow::Result<Session> {
        let base = base(reference)?;
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .user_agent(concat!("modhost/", env!("CARGO_PKG_VERSION")))
            .build()
            .context("the HTTP client")?;
        let registry = reference.resolve_registry();
        let credentials = auth::credentials(registry)?;
        let scope = format!("repository:{}:{actions}", reference.repository());
        let authorization = auth::authorize(&http, &base, registry, &scope, credentials.as_ref()).await?;
        Ok(Session { http, base, authorization })
    }

    /// A GET of `path` on the registry, authorized. A redirect elsewhere (a blob store) is followed
    /// without the authorization: reqwest drops it when the scheme, host or port changes.
    fn get(&self, path: &str) -> anyhow::Result<reqwest::RequestBuilder> {
        let url = self.base.join(path).with_context(|| format!("`{path}` on {}", self.base))?;
        Ok(self.authorization.apply(self.http.get(url)))
    }
}

/// Pushes a package file (`bytes`, which `package` was read from) to `reference`; answers the URL
/// the registry gave the manifest.
pub async fn push(reference: &Reference, package: &Package, bytes: &[u8]) -> anyhow::Result<String> {
    let session = Session::open(reference, "pull,push").await?;
    let protocol = match session.base.scheme() {
        "http" => ClientProtocol::Http,
        _ => ClientProtocol::Https,
    };
    let client = Client::new(ClientConfig {
        protocol,
        connect_timeout: Some(CONNECT_TIMEOUT),
        read_timeout: Some(READ_TIMEOUT),
        ..Default::default()
    });
    let auth = session.authorization.hand_to(&client, reference).await;
    let layer = ImageLayer::new(bytes.to_vec(), LAYER_MEDIA_TYPE.to_owned(), None);
    let config = Config::new(serde_json::to_vec(&package.manifest())?, CONFIG_MEDIA_TYPE.to_owned(), None);
    let pushed = client
        .push(reference, &[layer], config, &auth, None)
        .await
        .with_context(|| format!("pushing to {reference}"))?;
    Ok(pushed.manifest_url)
}

/// `sha256:<hex>` of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("sha256:{:x}", sha2::Sha256::digest(bytes))
}

/// Whether `digest` is `sha256:` and 64 lowercase hex digits: the only kind modhost checks, and so
/// one that is safe in a URL's path.
fn is_sha256(digest: &str) -> bool {
    digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// Pulls the package at `reference`: its bytes, checked against the layer's digest and size. The
/// manifest is read under [`MANIFEST_MAX`] and checked against the digest the reference or the
/// registry gives it; the layer under the size the manifest gives it.
pub async fn pull(reference: &Reference) -> anyhow::Result<Vec<u8>> {
    const TAMPERED: &str = "refused: what the registry sent is not what was published";
    let session = Session::open(reference, "pull").await?;
    let repository = reference.repository();
    let at = reference.digest().or(reference.tag()).unwrap_or("latest");
    let answer = session
        .get(&format!("/v2/{repository}/manifests/{at}"))?
        .header(reqwest::header::ACCEPT, MANIFEST_ACCEPT)
        .send()
        .await
        .with_context(|| format!("fetching the manifest of {reference}"))?;
    let answer = auth::refusal(answer, &format!("{reference}: the registry")).await?;
    let said = answer.headers().get("docker-content-digest").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body = auth::read_bounded(answer, MANIFEST_MAX, &format!("{reference}: its manifest answer")).await?;
    let digest = sha256(&body);
    for expected in [reference.digest(), said.as_deref().filter(|d| d.starts_with("sha256:"))].into_iter().flatten() {
        anyhow::ensure!(
            expected == digest,
            "fetching the manifest of {reference} ({TAMPERED}: it is {digest}, not {expected})"
        );
    }
    let manifest: OciImageManifest = serde_json::from_slice(&body).map_err(|e| {
        anyhow::anyhow!("{reference} is not a modhost package (its manifest is not an OCI image manifest: {e})")
    })?;
    let layer = manifest
        .layers
        .iter()
        .find(|l| l.media_type == LAYER_MEDIA_TYPE)
        .with_context(|| format!("{reference} is not a modhost package (no {LAYER_MEDIA_TYPE} layer)"))?;
    anyhow::ensure!(
        layer.size >= 0 && (layer.size as u64) <= MAX_TOTAL,
        "{reference}: the package is {} bytes, over the {} MiB a package may be",
        layer.size,
        MAX_TOTAL >> 20
    );
    anyhow::ensure!(
        is_sha256(&layer.digest),
        "{reference}: its layer's digest `{}` is not a sha256 digest",
        layer.digest
    );
    let answer = session
        .get(&format!("/v2/{repository}/blobs/{}", layer.digest))?
        .send()
        .await
        .with_context(|| format!("fetching {reference}"))?;
    let answer = auth::refusal(answer, &format!("{reference}: the registry")).await?;
    // Cut off past the size the manifest gave the layer, not after the digest check at the end of
    // an unbounded download.
    let bytes = auth::read_bounded(answer, layer.size as usize, &format!("{reference}: its layer"))
        .await
        .with_context(|| format!("fetching {reference} ({TAMPERED})"))?;
    let got = sha256(&bytes);
    anyhow::ensure!(got == layer.digest, "fetching {reference} ({TAMPERED}: it is {got}, not {})", layer.digest);
    Ok(bytes)
}

/// The versions published in `reference`'s repository: its tags that are semver versions, newest first.
pub async fn versions(reference: &Reference) -> anyhow::Result<Vec<semver::Version>> {
    let listing = || format!("listing the versions of {}/{}", reference.registry(), reference.repository());
    let session = Session::open(reference, "pull").await.with_context(listing)?;
    let answer =
        session.get(&format!("/v2/{}/tags/list", reference.repository()))?.send().await.with_context(listing)?;
    let answer = auth::refusal(answer, &listing()).await?;
    let what = format!("{}/{}: its tag list answer", reference.registry(), reference.repository());
    let body = auth::read_bounded(answer, TAGS_MAX, &what).await?;
    let tags: oci_client::client::TagResponse = serde_json::from_slice(&body).with_context(listing)?;
    let mut versions: Vec<semver::Version> = tags.tags.iter().filter_map(|t| semver::Version::parse(t).ok()).collect();
    versions.sort_unstable_by(|a, b| b.cmp(a));
    Ok(versions)
}
