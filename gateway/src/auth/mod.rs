//! Who may call (docs/design.md §7): the [`Principal`] of each request, and how it is established
//! (bearer tokens in [`bearer`], their keys from a JWKS file or URL), and what it may call ([`policy`], Cedar).

pub mod bearer;
mod jwks;
mod jwks_url;
#[cfg(feature = "cedar")]
pub mod policy;
/// Cedar authorization (`--policy`): this build has no Cedar (cargo feature `cedar`).
#[cfg(not(feature = "cedar"))]
#[path = "policy_stub.rs"]
pub mod policy;
mod policy_types;
mod principal;
mod verified;

pub use self::bearer::{BearerAuth, BearerRefusal, MAX_TOKEN_BYTES, bearer_token};
pub use self::jwks::JwksError;
pub use self::jwks_url::{
    DEFAULT_JWKS_REFETCH_INTERVAL, DEFAULT_JWKS_TIMEOUT, DEFAULT_MAX_JWKS_BYTES, JwksFetchError,
    JwksUrl,
};
pub use self::policy::{PolicyDecision, PolicyError, ToolPolicy};
pub use self::principal::Principal;

/// The path of the RFC 9728 protected-resource metadata document of the resource at `/mcp`:
/// `/.well-known/oauth-protected-resource` inserted before the resource's path (RFC 9728 §3.1).
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
