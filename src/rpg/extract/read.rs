//! Reading one Python module with tree-sitter: its docstring, `__all__`, imports, top-level
//! definitions (signatures, docstrings, methods, the names they call and read) and literal
//! data. Nothing is executed; [`super`] turns what is read into plan nodes and edges.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node as TsNode;

use super::docstring::{cleandoc, docstring_of, string_value};
use super::{MAX_HOPS, Skipped, SourceFile};
use crate::python::is_identifier;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DefKind {
    Function,
    Class,
}

#[derive(Debug, Clone)]
pub(super) struct Method {
    pub(super) signature: String,
    pub(super) docstring: Option<String>,
}

/// One top-level definition.
#[derive(Debug, Clone)]
pub(super) struct Def {
    pub(super) name: String,
    pub(super) kind: DefKind,
    pub(super) signature: String,
    pub(super) docstring: Option<String>,
    pub(super) calls: Vec<Call>,
    /// Names and dotted names read anywhere in the definition (for `uses` edges to data).
    pub(super) reads: Vec<Call>,
    /// A class's base classes, as written.
    pub(super) bases: Vec<String>,
    pub(super) methods: Vec<Method>,
}

/// A called name: `g` or `a.b.g` (the object a dotted path of names).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Call {
    pub(super) object: Vec<String>,
    pub(super) name: String,
}

impl Call {
    pub(super) fn from_text(text: &str) -> Option<Call> {
        let mut parts: Vec<String> = text.split('.').map(|p| p.trim().to_string()).collect();
        if parts.iter().any(|p| !is_identifier(p)) {
            return None;
        }
        let name = parts.pop()?;
        Some(Call {
            object: parts,
            name,
        })
    }
}

/// Where a name bound by an import comes from.
#[derive(Debug, Clone)]
pub(super) enum Binding {
    /// `from module import name`: a name of `module` (or its submodule `module.name`).
    Name { module: String, name: String },
    /// `import a.b as m`: the module itself.
    Module(String),
}

#[derive(Debug, Clone, Default)]
pub(super) struct Module {
    pub(super) is_package: bool,
    pub(super) docstring: Option<String>,
    /// `__all__` when it is a literal list or tuple of strings.
    pub(super) all: Option<BTreeSet<String>>,
    pub(super) defs: BTreeMap<String, Def>,
    /// Top-level assignments of one name to a literal, by name.
    pub(super) data: BTreeMap<String, DataDef>,
    pub(super) imports: BTreeMap<String, Binding>,
    pub(super) wildcards: Vec<String>,
    pub(super) skipped: Vec<Skipped>,
    /// Names of this module that a package's `__init__.py` imports by name.
    pub(super) reexported: BTreeSet<String>,
}

impl Module {
    pub(super) fn is_public(&self, name: &str) -> bool {
        self.reexported.contains(name)
            || match &self.all {
                Some(all) => all.contains(name),
                None => !name.starts_with('_'),
            }
    }
}

/// Marks in each module the names a package's `__init__.py` imports from it by name.
pub(super) fn mark_reexports(modules: &mut BTreeMap<String, Module>) {
    let reexports: Vec<(String, String)> = modules
        .values()
        .filter(|m| m.is_package)
        .flat_map(|m| m.imports.values())
        .filter_map(|binding| match binding {
            Binding::Name { module, name } => Some((module.clone(), name.clone())),
            Binding::Module(_) => None,
        })
        .collect();
    for (module, name) in reexports {
        if let Some(at) = modules.get_mut(&module)
            && (at.defs.contains_key(&name) || at.data.contains_key(&name))
        {
            at.reexported.insert(name);
        }
    }
}

pub(super) fn text<'a>(node: TsNode<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or_default()
}

pub(super) fn read_module(file: &SourceFile, root: TsNode<'_>, source: &str) -> Module {
    let mut module = Module {
        is_package: file.is_package,
        docstring: docstring_of(root, source),
        ..Module::default()
    };
    let package = match file.is_package {
        true => file.dotted.clone(),
        false => file
            .dotted
            .rsplit_once('.')
            .map(|(p, _)| p.to_string())
            .unwrap_or_default(),
    };
    // Imports at any depth: a function-local import binds the name where it is called.
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "import_statement" => read_import(node, source, &mut module),
            "import_from_statement" => read_from_import(node, source, &package, &mut module),
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.named_children(&mut cursor));
            }
        }
    }
    let mut cursor = root.walk();
    let statements: Vec<TsNode<'_>> = root.named_children(&mut cursor).collect();
    for (at, &statement) in statements.iter().enumerate() {
        let definition = match statement.kind() {
            "decorated_definition" => statement.child_by_field_name("definition"),
            "function_definition" | "class_definition" => Some(statement),
            "expression_statement" => {
                read_all(statement, source, &mut module);
                read_data(&statements, at, source, &mut module);
                None
            }
            _ => None,
        };
        let Some(definition) = definition else {
            continue;
        };
        let Some(def) = read_def(definition, source) else {
            continue;
        };
        if module.defs.contains_key(&def.name) {
            module.skipped.push(Skipped {
                name: def.name.clone(),
                reason: "defined more than once; the last definition is planned".into(),
            });
        }
        module.defs.insert(def.name.clone(), def);
    }
    module.skipped.sort_by(|a, b| a.name.cmp(&b.name));
    module.skipped.dedup();
    module
}

fn read_import(node: TsNode<'_>, source: &str, module: &mut Module) {
    let mut cursor = node.walk();
    for name in node.children_by_field_name("name", &mut cursor) {
        match name.kind() {
            "aliased_import" => {
                let (Some(dotted), Some(alias)) = (
                    name.child_by_field_name("name"),
                    name.child_by_field_name("alias"),
                ) else {
                    continue;
                };
                module.imports.insert(
                    text(alias, source).to_string(),
                    Binding::Module(text(dotted, source).to_string()),
                );
            }
            _ => {
                // `import a.b` binds `a`; `a.b.g(...)` is then resolved through the dotted path.
                let dotted = text(name, source);
                let first = dotted.split('.').next().unwrap_or(dotted);
                module
                    .imports
                    .insert(first.to_string(), Binding::Module(first.to_string()));
            }
        }
    }
}

fn read_from_import(node: TsNode<'_>, source: &str, package: &str, module: &mut Module) {
    let Some(from) = node.child_by_field_name("module_name") else {
        return;
    };
    let from_text = text(from, source);
    let absolute = if from.kind() == "relative_import" {
        let dots = from_text.chars().take_while(|c| *c == '.').count();
        let rest = &from_text[dots..];
        let mut base: Vec<&str> = package.split('.').filter(|p| !p.is_empty()).collect();
        for _ in 1..dots {
            base.pop();
        }
        if !rest.is_empty() {
            base.push(rest);
        }
        base.join(".")
    } else {
        from_text.to_string()
    };
    let mut cursor = node.walk();
    if node
        .named_children(&mut cursor)
        .any(|c| c.kind() == "wildcard_import")
    {
        module.wildcards.push(absolute);
        return;
    }
    let mut cursor = node.walk();
    for name in node.children_by_field_name("name", &mut cursor) {
        let (original, local) = match name.kind() {
            "aliased_import" => {
                let (Some(n), Some(a)) = (
                    name.child_by_field_name("name"),
                    name.child_by_field_name("alias"),
                ) else {
                    continue;
                };
                (text(n, source), text(a, source))
            }
            _ => (text(name, source), text(name, source)),
        };
        module.imports.insert(
            local.to_string(),
            Binding::Name {
                module: absolute.clone(),
                name: original.to_string(),
            },
        );
    }
}

/// A module-level assignment of one name as data: its value as written, whether it is a
/// literal, and its docstring.
#[derive(Debug, Clone)]
pub(super) struct DataDef {
    /// The value's source, or why it is not a literal the plan can hold.
    pub(super) value: Result<String, crate::python::LiteralError>,
    /// The value's source as written (`object()`), literal or not.
    pub(super) source: String,
    /// The names the value reads (`TZ_REGEX` in `re.compile(TZ_REGEX)`); none for a literal.
    pub(super) reads: Vec<Call>,
    /// The comment block above the assignment, or the string after it.
    pub(super) docstring: Option<String>,
    /// What the value is, for a docstring of its own (`a dict of 3 entries`).
    pub(super) what: String,
    /// How a later module-level statement changed it (`+=`, `NAME[k] = v`, ...), if one did.
    pub(super) rebound: Option<String>,
}

/// Reads statement `at` of the module for data: `NAME = VALUE` (or `NAME: T = VALUE`) records
/// the name; a later `NAME += ...`, `NAME[k] = v`, `NAME.x = v` or `NAME.method(...)` marks
/// it changed. Dunder names are never data.
fn read_data(statements: &[TsNode<'_>], at: usize, source: &str, module: &mut Module) {
    let Some(expression) = statements[at].named_child(0) else {
        return;
    };
    if let Some((name, how)) = rebinding(expression, source)
        && let Some(data) = module.data.get_mut(name)
    {
        data.rebound.get_or_insert(how);
        return;
    }
    if expression.kind() != "assignment" {
        return;
    }
    let (Some(left), Some(right)) = (
        expression.child_by_field_name("left"),
        expression.child_by_field_name("right"),
    ) else {
        return;
    };
    let name = text(left, source);
    let dunder = name.len() > 4 && name.starts_with("__") && name.ends_with("__");
    if left.kind() != "identifier" || right.kind() == "assignment" || dunder {
        return;
    }
    let value = text(right, source).replace("\r\n", "\n");
    let checked = crate::python::check_literal(&value).map(|()| value.clone());
    let data = DataDef {
        reads: match checked {
            Ok(_) => Vec::new(),
            Err(_) => collect_reads(right, source),
        },
        value: checked,
        source: value,
        docstring: attribute_docstring(statements, at, source)
            .or_else(|| comments_above(statements, at, source)),
        what: describe(right, source),
        rebound: None,
    };
    if module.data.insert(name.to_string(), data).is_some() {
        module.skipped.push(Skipped {
            name: name.to_string(),
            reason: "assigned more than once at module level; the last assignment is planned"
                .into(),
        });
    }
}

/// The name a module-level statement changes without assigning it anew, and how.
fn rebinding<'s>(expression: TsNode<'_>, source: &'s str) -> Option<(&'s str, String)> {
    let root_name = |mut node: TsNode<'_>| {
        while matches!(node.kind(), "attribute" | "subscript") {
            node = node.child_by_field_name(match node.kind() {
                "attribute" => "object",
                _ => "value",
            })?;
        }
        (node.kind() == "identifier").then(|| text(node, source))
    };
    match expression.kind() {
        "augmented_assignment" => {
            let left = expression.child_by_field_name("left")?;
            let operator = expression.child_by_field_name("operator")?;
            (left.kind() == "identifier")
                .then(|| (text(left, source), format!("`{}`", text(operator, source))))
        }
        "assignment" => {
            let left = expression.child_by_field_name("left")?;
            let how = match left.kind() {
                "subscript" => "an item assigned",
                "attribute" => "an attribute assigned",
                _ => return None,
            };
            Some((root_name(left)?, how.to_string()))
        }
        "call" => {
            let function = expression.child_by_field_name("function")?;
            let method = function.child_by_field_name("attribute")?;
            let object = function.child_by_field_name("object")?;
            (function.kind() == "attribute").then_some(())?;
            Some((
                root_name(object)?,
                format!("`.{}(...)` called on it", text(method, source)),
            ))
        }
        _ => None,
    }
}

/// The string statement right after assignment `at`: the attribute docstring convention.
fn attribute_docstring(statements: &[TsNode<'_>], at: usize, source: &str) -> Option<String> {
    let next = statements.get(at + 1)?;
    if next.kind() != "expression_statement" || next.named_child_count() != 1 {
        return None;
    }
    let value = string_value(next.named_child(0)?, source)?;
    let cleaned = cleandoc(&value);
    (!cleaned.is_empty()).then_some(cleaned)
}

/// The block of whole-line comments right above statement `at` (`#` or `#:` stripped).
fn comments_above(statements: &[TsNode<'_>], at: usize, source: &str) -> Option<String> {
    let mut lines = Vec::new();
    let mut next_row = statements[at].start_position().row;
    for comment in statements[..at].iter().rev() {
        let adjacent = comment.end_position().row + 1 == next_row;
        if comment.kind() != "comment" || comment.start_position().column != 0 || !adjacent {
            break;
        }
        let line = text(*comment, source).trim_start_matches('#');
        let line = line.strip_prefix(':').unwrap_or(line);
        lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end());
        next_row = comment.start_position().row;
    }
    lines.reverse();
    let doc = lines.join("\n").trim().to_string();
    (!doc.is_empty()).then_some(doc)
}

/// What a value is, in a few words (`a dict of 3 entries`, `a string`, "the result of `f(...)`").
fn describe(value: TsNode<'_>, source: &str) -> String {
    let count = |node: TsNode<'_>| {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .count()
    };
    let of = |what: &str, node: TsNode<'_>| match count(node) {
        1 => format!("{what} of 1 entry"),
        n => format!("{what} of {n} entries"),
    };
    match value.kind() {
        "dictionary" => of("a dict", value),
        "list" => of("a list", value),
        "tuple" => of("a tuple", value),
        "set" => of("a set", value),
        "string" | "concatenated_string" => "a string".into(),
        "integer" | "float" | "unary_operator" => "a number".into(),
        "true" | "false" => "a bool".into(),
        "none" => "None".into(),
        "call" => value
            .child_by_field_name("function")
            .map(|f| format!("the result of `{}(...)`", text(f, source)))
            .unwrap_or_else(|| "a value".into()),
        _ => "a value".into(),
    }
}

/// `source` parsed as Python, for the readers of one module's text below.
fn parse(source: &str) -> Option<tree_sitter::Tree> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    parser.parse(source, None)
}

/// A module's `__all__` as [`read_all`] reads it from its top-level statements: `None` when it
/// has none, or one that is not a literal list or tuple of strings.
pub(crate) fn literal_all(source: &str) -> Option<BTreeSet<String>> {
    let tree = parse(source)?;
    let root = tree.root_node();
    let mut module = Module::default();
    let mut cursor = root.walk();
    for statement in root.named_children(&mut cursor) {
        if statement.kind() == "expression_statement" {
            read_all(statement, source, &mut module);
        }
    }
    module.all
}

/// The byte offset of the closing bracket of the module's last top-level `__all__ = [...]`
/// (or `(...)`): where a name is added to the list.
pub(crate) fn all_list_end(source: &str) -> Option<usize> {
    let tree = parse(source)?;
    let root = tree.root_node();
    let mut cursor = root.walk();
    let mut end = None;
    for statement in root.named_children(&mut cursor) {
        let Some(assignment) = statement.named_child(0) else {
            continue;
        };
        let (Some(left), Some(right)) = (
            assignment.child_by_field_name("left"),
            assignment.child_by_field_name("right"),
        ) else {
            continue;
        };
        if statement.kind() == "expression_statement"
            && matches!(assignment.kind(), "assignment" | "augmented_assignment")
            && text(left, source) == "__all__"
            && matches!(right.kind(), "list" | "tuple")
        {
            end = Some(right.end_byte() - 1);
        }
    }
    end
}

/// `__all__ = [...]` or `__all__ += [...]` with string literals only; anything else there
/// makes `__all__` unknown (the `_` rule decides).
fn read_all(statement: TsNode<'_>, source: &str, module: &mut Module) {
    let Some(assignment) = statement.named_child(0) else {
        return;
    };
    let augmented = match assignment.kind() {
        "assignment" => false,
        "augmented_assignment" => true,
        _ => return,
    };
    let (Some(left), Some(right)) = (
        assignment.child_by_field_name("left"),
        assignment.child_by_field_name("right"),
    ) else {
        return;
    };
    if text(left, source) != "__all__" {
        return;
    }
    let mut names = BTreeSet::new();
    let literal = matches!(right.kind(), "list" | "tuple") && {
        let mut cursor = right.walk();
        right
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .all(|item| match string_value(item, source) {
                Some(name) => {
                    names.insert(name);
                    true
                }
                None => false,
            })
    };
    module.all = match (literal, augmented, module.all.take()) {
        (false, _, _) => None,
        (true, true, Some(mut before)) => {
            before.extend(names);
            Some(before)
        }
        (true, true, None) => None,
        (true, false, _) => Some(names),
    };
}

fn read_def(definition: TsNode<'_>, source: &str) -> Option<Def> {
    let name = text(definition.child_by_field_name("name")?, source).to_string();
    let body = definition.child_by_field_name("body")?;
    let docstring = docstring_of(body, source);
    let mut calls = BTreeSet::new();
    collect_calls(body, source, &mut calls);
    let reads = collect_reads(definition, source);
    match definition.kind() {
        "function_definition" => Some(Def {
            signature: function_signature(definition, source)?,
            name,
            kind: DefKind::Function,
            docstring,
            calls: calls.into_iter().collect(),
            reads,
            bases: Vec::new(),
            methods: Vec::new(),
        }),
        "class_definition" => {
            let mut bases = Vec::new();
            let mut signature = format!("class {name}");
            if let Some(params) = definition.child_by_field_name("type_parameters") {
                signature.push_str(&one_line(text(params, source)));
            }
            if let Some(superclasses) = definition.child_by_field_name("superclasses") {
                let mut cursor = superclasses.walk();
                let args: Vec<String> = superclasses
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() != "comment")
                    .map(|c| one_line(text(c, source)))
                    .collect();
                bases = args.clone();
                if !args.is_empty() {
                    signature.push_str(&format!("({})", args.join(", ")));
                }
            }
            Some(Def {
                name,
                kind: DefKind::Class,
                signature,
                docstring,
                calls: calls.into_iter().collect(),
                reads,
                bases,
                methods: methods_of(body, source),
            })
        }
        _ => None,
    }
}

/// A class's public methods (dunders included), in source order.
fn methods_of(body: TsNode<'_>, source: &str) -> Vec<Method> {
    let mut out = Vec::new();
    let mut cursor = body.walk();
    for statement in body.named_children(&mut cursor) {
        let definition = match statement.kind() {
            "decorated_definition" => statement.child_by_field_name("definition"),
            "function_definition" => Some(statement),
            _ => None,
        };
        let Some(definition) = definition.filter(|d| d.kind() == "function_definition") else {
            continue;
        };
        let Some(name) = definition.child_by_field_name("name") else {
            continue;
        };
        let name = text(name, source);
        let dunder = name.starts_with("__") && name.ends_with("__") && name.len() > 4;
        if name.starts_with('_') && !dunder {
            continue;
        }
        let Some(signature) = function_signature(definition, source) else {
            continue;
        };
        let docstring = definition
            .child_by_field_name("body")
            .and_then(|b| docstring_of(b, source));
        out.push(Method {
            signature,
            docstring,
        });
    }
    out
}

/// `def name(params) -> ret` on one line: parameters joined by `, `, comments left out.
fn function_signature(definition: TsNode<'_>, source: &str) -> Option<String> {
    let name = text(definition.child_by_field_name("name")?, source);
    let parameters = definition.child_by_field_name("parameters")?;
    let is_async = {
        let mut cursor = definition.walk();
        definition
            .children(&mut cursor)
            .any(|c| c.kind() == "async")
    };
    let mut cursor = parameters.walk();
    let params: Vec<String> = parameters
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .map(|c| one_line(text(c, source)))
        .collect();
    let mut signature = format!(
        "{}def {name}",
        match is_async {
            true => "async ",
            false => "",
        }
    );
    if let Some(type_params) = definition.child_by_field_name("type_parameters") {
        signature.push_str(&one_line(text(type_params, source)));
    }
    signature.push_str(&format!("({})", params.join(", ")));
    if let Some(returns) = definition.child_by_field_name("return_type") {
        signature.push_str(&format!(" -> {}", one_line(text(returns, source))));
    }
    Some(signature)
}

/// Text spread over lines joined into one: each line break and the indentation after it
/// becomes one space (none after an opening or before a closing bracket).
fn one_line(text: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let line = match i {
            0 => line.trim_end(),
            _ => line.trim(),
        };
        if line.is_empty() {
            continue;
        }
        let glue = !out.is_empty()
            && !out.ends_with(['(', '[', '{'])
            && !line.starts_with([')', ']', '}']);
        if glue {
            out.push(' ');
        }
        out.push_str(line);
    }
    out.replace(",)", ")").replace(",]", "]")
}

/// The names and dotted names (`NAME`, `m.NAME`) read anywhere in `definition`: its body,
/// its parameters' defaults and annotations. An attribute of something else (`x.NAME`) and a
/// keyword argument's name are not reads of a module's name.
fn collect_reads(definition: TsNode<'_>, source: &str) -> Vec<Call> {
    let mut reads = BTreeSet::new();
    let mut stack = vec![definition];
    while let Some(node) = stack.pop() {
        let field_of = |parent: &str, field: &str| {
            node.parent().is_some_and(|p| {
                p.kind() == parent
                    && p.child_by_field_name(field)
                        .is_some_and(|c| c.id() == node.id())
            })
        };
        let read = match node.kind() {
            "identifier" => {
                !field_of("attribute", "attribute") && !field_of("keyword_argument", "name")
            }
            "attribute" => true,
            _ => false,
        };
        if read && let Some(call) = Call::from_text(text(node, source)) {
            reads.insert(call);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    reads.into_iter().collect()
}

fn collect_calls(body: TsNode<'_>, source: &str, calls: &mut BTreeSet<Call>) {
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        if node.kind() == "call"
            && let Some(function) = node.child_by_field_name("function")
            && matches!(function.kind(), "identifier" | "attribute")
            && let Some(call) = Call::from_text(text(function, source))
        {
            calls.insert(call);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
}

/// The `(module, name)` of the planned definition `call` reaches from `module`, if any.
pub(super) fn resolve_call(
    modules: &BTreeMap<String, Module>,
    module: &str,
    call: &Call,
) -> Option<(String, String)> {
    if call.object.is_empty() {
        return resolve_name(modules, module, &call.name, 0);
    }
    // `m.g(...)`: `m` (or `a.b`) must name a module of the source.
    let first = &call.object[0];
    let base = match modules.get(module)?.imports.get(first)? {
        Binding::Module(name) => name.clone(),
        Binding::Name { module, name } => format!("{module}.{name}"),
    };
    let target: Vec<&str> = std::iter::once(base.as_str())
        .chain(call.object[1..].iter().map(String::as_str))
        .collect();
    let target = target.join(".");
    modules.contains_key(&target).then_some(())?;
    resolve_name(modules, &target, &call.name, 0)
}

/// Where `name`, as seen from `module`, is defined: in it, or through its imports.
fn resolve_name(
    modules: &BTreeMap<String, Module>,
    module: &str,
    name: &str,
    hops: usize,
) -> Option<(String, String)> {
    if hops > MAX_HOPS {
        return None;
    }
    let at = modules.get(module)?;
    if at.defs.contains_key(name) || at.data.contains_key(name) {
        return Some((module.to_string(), name.to_string()));
    }
    if let Some(Binding::Name {
        module: from,
        name: original,
    }) = at.imports.get(name)
    {
        return resolve_name(modules, from, original, hops + 1);
    }
    at.wildcards.iter().find_map(|from| {
        let found = modules.get(from)?;
        found
            .is_public(name)
            .then(|| resolve_name(modules, from, name, hops + 1))
            .flatten()
    })
}
