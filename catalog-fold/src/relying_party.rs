//! Evaluating a relying party's requirement set against the components a token presents
//! (seed 000 §6 and §8, vectors COMP-MCP-004 to 006).
//!
//! Seed 000 §6 fixes one comparison: a `tool-catalog` requirement's `expected_observed_digest`
//! against the presented component's `observed_digest`, a difference being
//! `component_observation_mismatch`. The seed is silent on the other ways a presentation can
//! fail to meet a requirement set; the decisions taken here (all fail closed) are:
//!
//! - **A required component that is not presented** is `component_missing`: with no
//!   observation there is nothing to affirm.
//! - **A presented component of another type** is `component_type_mismatch`, checked before
//!   any digest: a digest means something only under its component's type (an `mcp-server`
//!   digest equal to a pinned catalog digest proves nothing about a catalog).
//! - **A pinned requirement whose component carries no `observed_digest`** is
//!   `component_observation_mismatch` with no presented digest: an absent observation is not
//!   the pinned one.
//! - **Two presented components with the same `component_id`** are `duplicate_component`:
//!   which one a verifier would read is ambiguous, and a hostile token must not get to choose.
//! - **A requirement without a pin** (`mcp.server` in the vectors) needs only the component,
//!   of the right type; its `observed_digest`, if any, is not compared.
//! - **Presented components no requirement names** are ignored.
//!
//! Requirements are checked in order and the first failure is the outcome, so the outcome of a
//! given input is always the same.

use std::collections::BTreeSet;
use std::fmt;

use jcs_digest::Digest;

/// What a relying party requires of one component of a token (seed 000 §6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentRequirement {
    /// The component's identifier, e.g. `tools.catalog`.
    pub component_id: String,
    /// The component's type, e.g. `tool-catalog` or `mcp-server`.
    pub component_type: String,
    /// The pin: the digest the component must present, or `None` for no pin. For a
    /// `tool-catalog` component this is the catalog digest of the `tools/list` the relying
    /// party holds.
    pub expected_observed_digest: Option<Digest>,
}

/// One component a token presents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresentedComponent {
    /// The component's identifier, e.g. `tools.catalog`.
    pub component_id: String,
    /// The component's type, e.g. `tool-catalog`.
    pub component_type: String,
    /// The digest the appraiser observed: for a `tool-catalog` component, the catalog digest of
    /// the `tools/list` it observed.
    pub observed_digest: Option<Digest>,
}

/// The outcome of [`evaluate`]: the requirement set is met, or the first way it is not.
#[must_use = "an outcome other than Affirming is a rejection"]
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every requirement is met: the token is `valid` and the composite status `affirming`.
    Affirming,
    /// A pinned component presents another digest, or none (seed 000 §6).
    ComponentObservationMismatch {
        /// The component whose observation differs.
        component_id: String,
        /// The pinned `expected_observed_digest`.
        expected: Digest,
        /// The presented `observed_digest`, if the component carries one.
        presented: Option<Digest>,
    },
    /// A required component is not presented.
    ComponentMissing {
        /// The required component.
        component_id: String,
    },
    /// A required component is presented with another type.
    ComponentTypeMismatch {
        /// The component.
        component_id: String,
        /// The type the requirement names.
        expected: String,
        /// The type the token presents.
        presented: String,
    },
    /// Two or more presented components share one identifier.
    DuplicateComponent {
        /// The shared identifier.
        component_id: String,
    },
}

impl Outcome {
    /// The outcome code as the vectors write it: `valid`, `component_observation_mismatch`,
    /// `component_missing`, `component_type_mismatch` or `duplicate_component`.
    pub fn code(&self) -> &'static str {
        match self {
            Outcome::Affirming => "valid",
            Outcome::ComponentObservationMismatch { .. } => "component_observation_mismatch",
            Outcome::ComponentMissing { .. } => "component_missing",
            Outcome::ComponentTypeMismatch { .. } => "component_type_mismatch",
            Outcome::DuplicateComponent { .. } => "duplicate_component",
        }
    }

    /// The composite status of a valid token, `affirming`; `None` for a rejection.
    pub fn composite_status(&self) -> Option<&'static str> {
        match self {
            Outcome::Affirming => Some("affirming"),
            _ => None,
        }
    }

    /// The component a rejection is about; `None` for [`Outcome::Affirming`].
    pub fn component_id(&self) -> Option<&str> {
        match self {
            Outcome::Affirming => None,
            Outcome::ComponentObservationMismatch { component_id, .. }
            | Outcome::ComponentMissing { component_id }
            | Outcome::ComponentTypeMismatch { component_id, .. }
            | Outcome::DuplicateComponent { component_id } => Some(component_id),
        }
    }

    /// Whether every requirement is met.
    pub fn is_affirming(&self) -> bool {
        matches!(self, Outcome::Affirming)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Affirming => f.write_str(
                "valid: every required component is presented and matches its pin (affirming)",
            ),
            Outcome::ComponentObservationMismatch {
                component_id,
                expected,
                presented: Some(presented),
            } => write!(
                f,
                "component_observation_mismatch: component {component_id:?} presents observed digest {presented}, but the requirement pins {expected}; the observed catalog is not the pinned one (drift, or another server's catalog): compare the two tools/list documents tool by tool, then re-appraise or update the pin"
            ),
            Outcome::ComponentObservationMismatch {
                component_id,
                expected,
                presented: None,
            } => write!(
                f,
                "component_observation_mismatch: component {component_id:?} presents no observed digest, but the requirement pins {expected}; the token must carry the digest the appraiser observed"
            ),
            Outcome::ComponentMissing { component_id } => write!(
                f,
                "component_missing: the requirement set names component {component_id:?}, which the token does not present; the token must be appraised with that component"
            ),
            Outcome::ComponentTypeMismatch {
                component_id,
                expected,
                presented,
            } => write!(
                f,
                "component_type_mismatch: component {component_id:?} is presented as type {presented:?}, but the requirement names type {expected:?}; a digest is compared only under its own component type"
            ),
            Outcome::DuplicateComponent { component_id } => write!(
                f,
                "duplicate_component: the token presents component {component_id:?} more than once; which observation applies is ambiguous, so the token is refused"
            ),
        }
    }
}

/// Evaluates `requirements` against the `presented` components of a token (seed 000 §6, §8).
///
/// Returns [`Outcome::Affirming`] when every required component is presented once, with the
/// required type, and — where the requirement pins an `expected_observed_digest` — with an
/// equal `observed_digest` (compared in constant time). Otherwise returns the first failure in
/// requirement order; the module documentation lists the decisions the seed leaves open.
///
/// # Example
///
/// ```
/// use catalog_fold::{ComponentRequirement, Outcome, PresentedComponent, evaluate};
/// use jcs_digest::Digest;
///
/// let pinned = Digest::of(b"the catalog the relying party holds");
/// let observed = Digest::of(b"the catalog the appraiser observed");
/// let requirements = [ComponentRequirement {
///     component_id: "tools.catalog".into(),
///     component_type: "tool-catalog".into(),
///     expected_observed_digest: Some(pinned),
/// }];
/// let mut presented = [PresentedComponent {
///     component_id: "tools.catalog".into(),
///     component_type: "tool-catalog".into(),
///     observed_digest: Some(observed),
/// }];
/// let outcome = evaluate(&requirements, &presented);
/// assert_eq!(outcome.code(), "component_observation_mismatch");
/// assert_eq!(outcome.component_id(), Some("tools.catalog"));
///
/// presented[0].observed_digest = Some(pinned);
/// assert_eq!(evaluate(&requirements, &presented), Outcome::Affirming);
/// ```
pub fn evaluate(
    requirements: &[ComponentRequirement],
    presented: &[PresentedComponent],
) -> Outcome {
    let mut seen = BTreeSet::new();
    for component in presented {
        if !seen.insert(component.component_id.as_str()) {
            return Outcome::DuplicateComponent {
                component_id: component.component_id.clone(),
            };
        }
    }
    for required in requirements {
        let Some(component) = presented
            .iter()
            .find(|component| component.component_id == required.component_id)
        else {
            return Outcome::ComponentMissing {
                component_id: required.component_id.clone(),
            };
        };
        if component.component_type != required.component_type {
            return Outcome::ComponentTypeMismatch {
                component_id: required.component_id.clone(),
                expected: required.component_type.clone(),
                presented: component.component_type.clone(),
            };
        }
        if let Some(expected) = required.expected_observed_digest {
            // `Digest`'s equality is constant-time.
            if component.observed_digest != Some(expected) {
                return Outcome::ComponentObservationMismatch {
                    component_id: required.component_id.clone(),
                    expected,
                    presented: component.observed_digest,
                };
            }
        }
    }
    Outcome::Affirming
}
