//! The Repository Planning Graph: its data model, loading from JSON and validation.
//!
//! Everything here is pure except [`load::load_file`], which only reads the file. Validation
//! collects every problem at once so a user fixes a plan in one pass, and nothing downstream
//! ever sees an RPG that failed it: [`ValidRpg`] can only be built by [`validate::validate`].

pub mod extract;
pub mod flow;
pub mod graph;
pub mod load;
pub mod model;
pub mod validate;

pub(crate) use graph::NodePos;
pub(crate) use load::LoadError;
pub use load::{load_file, parse_str};
pub(crate) use model::{EdgeKind, NodeKind, NodeType};
pub use model::{Node, NodeId, Rpg};
pub(crate) use validate::{RpgError, check_output_paths, terminal_safe};
pub use validate::{ValidRpg, Warning, validate};
