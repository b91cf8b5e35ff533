//! Mod packages in an OCI registry, the convention the wasm ecosystem uses (`wkg`, wasm-pkg-tools):
//! a package is an artifact of one layer (the `.modhost` file) whose config is its
//! `modhost-package.json`, and a mod's versions are its repository's tags.
//!
//! The client is `oci-client` (the ORAS project's, formerly `oci-distribution`): it speaks the
//! distribution API (token auth, chunked and monolithic uploads) and checks every blob it pulls
//! against its digest, so a registry that serves other bytes than were pushed is refused. On top of
//! that the layer's size is checked against the package limit before it is fetched, and the package's
//! own manifest of hashes is checked as it is read ([`Package::from_bytes`]).
//!
//! A registry on a loopback address is spoken to over plain HTTP (as Docker treats `localhost`
//! registries); every other one over HTTPS. Credentials, when a registry needs them, come from
//! `MODHOST_REGISTRY_USER` and `MODHOST_REGISTRY_PASSWORD`.

use anyhow::Context as _;
use modhost_mods::Package;
use modhost_mods::package::MAX_TOTAL;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

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

fn client(reference: &Reference) -> Client {
    let host = reference.resolve_registry().rsplit_once(':').map_or(reference.resolve_registry(), |(h, _)| h);
    let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    let protocol = if loopback { ClientProtocol::Http } else { ClientProtocol::Https };
    Client::new(ClientConfig { protocol, ..Default::default() })
}

fn auth() -> RegistryAuth {
    match (std::env::var("MODHOST_REGISTRY_USER"), std::env::var("MODHOST_REGISTRY_PASSWORD")) {
        (Ok(user), Ok(password)) => RegistryAuth::Basic(user, password),
        _ => RegistryAuth::Anonymous,
    }
}

/// Pushes a package file (`bytes`, which `package` was read from) to `reference`; answers the URL
/// the registry gave the manifest.
pub async fn push(reference: &Reference, package: &Package, bytes: &[u8]) -> anyhow::Result<String> {
    let layer = ImageLayer::new(bytes.to_vec(), LAYER_MEDIA_TYPE.to_owned(), None);
    let config = Config::new(serde_json::to_vec(&package.manifest())?, CONFIG_MEDIA_TYPE.to_owned(), None);
    let pushed = client(reference)
        .push(reference, &[layer], config, &auth(), None)
        .await
        .with_context(|| format!("pushing to {reference}"))?;
    Ok(pushed.manifest_url)
}

/// Pulls the package at `reference`: its bytes, checked against the layer's digest and size.
pub async fn pull(reference: &Reference) -> anyhow::Result<Vec<u8>> {
    let client = client(reference);
    let (manifest, _digest) = client
        .pull_image_manifest(reference, &auth())
        .await
        .with_context(|| format!("fetching the manifest of {reference}"))?;
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
    let mut out = Bounded { bytes: Vec::with_capacity(layer.size as usize), limit: layer.size as usize };
    client
        .pull_blob(reference, layer, &mut out)
        .await
        .with_context(|| format!("fetching {reference} (refused: what the registry sent is not what was published)"))?;
    Ok(out.bytes)
}

/// A buffer that refuses to grow past the size the manifest gave the layer: a registry that sends
/// more is cut off there, not after the digest check at the end of an unbounded download.
struct Bounded {
    bytes: Vec<u8>,
    limit: usize,
}

impl tokio::io::AsyncWrite for Bounded {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.bytes.len() + buf.len() > self.limit {
            let error = std::io::Error::other(format!("the registry sent more than the layer's {} bytes", self.limit));
            return std::task::Poll::Ready(Err(error));
        }
        self.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// The versions published in `reference`'s repository: its tags that are semver versions, newest first.
pub async fn versions(reference: &Reference) -> anyhow::Result<Vec<semver::Version>> {
    let tags = client(reference)
        .list_tags(reference, &auth(), None, None)
        .await
        .with_context(|| format!("listing the versions of {}/{}", reference.registry(), reference.repository()))?;
    let mut versions: Vec<semver::Version> = tags.tags.iter().filter_map(|t| semver::Version::parse(t).ok()).collect();
    versions.sort_unstable_by(|a, b| b.cmp(a));
    Ok(versions)
}
