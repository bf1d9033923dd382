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

pub use graph::{DepGraph, DepKind, NodePos};
pub use load::{LoadError, load_file, parse_str};
pub use model::{Edge, EdgeKind, Node, NodeId, NodeKind, NodeType, Rpg};
pub use validate::{RpgError, ValidRpg, Warning, check_output_paths, terminal_safe, validate};
