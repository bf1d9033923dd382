//! Whether a piece of untrusted Python source is a literal expression: the value a plan (or
//! `rpg extract`) gives a data node, written into a module as `NAME = VALUE`.
//!
//! Plan text reaches Python files only as an escaped literal or as code that was parsed and
//! checked; a value is the second kind. It is parsed with tree-sitter and walked, and every
//! node must be a literal: strings and bytes (never an f-string, whose `{...}` runs code),
//! numbers, `True`/`False`/`None`, lists, tuples, sets and dicts of literals, a sign before a
//! number, and a call of one of [`CONSTRUCTORS`] on one string or container literal (or on
//! nothing; `dict` also on keyword literals). Names, attributes, subscripts, operators,
//! comprehensions, lambdas and every other call are refused, so a value can compute nothing
//! and reach nothing: `__import__('os').system('...')` is a call of a name that is not a
//! constructor. Nothing is ever run here.
//!
//! Text that tree-sitter and Python could read differently is refused before parsing: control
//! characters but the line break and the tab (Python ends a line at a lone `\r` or a form
//! feed) and the Unicode bidirectional controls (they make the code read otherwise than it
//! runs).

use tree_sitter::{Node, Parser};

/// The longest value, in bytes. Real libraries ship generated tables (Unicode ranges, time
/// zones) of hundreds of KiB that their functions read; a plan must be able to hold them. A
/// value is written into its module as it is and shown to a prompt cut to its first lines, so
/// its size costs no tokens; the parse of 1 MiB takes a few milliseconds.
pub(crate) const MAX_LITERAL_BYTES: usize = 1024 * 1024;
/// The deepest nesting of containers: Python's parser gives up at 200 nested brackets.
pub(crate) const MAX_LITERAL_DEPTH: usize = 64;
/// The builtins a literal may call: each builds a value from a literal and runs no other code.
pub(crate) const CONSTRUCTORS: &[&str] = &[
    "bool",
    "bytes",
    "complex",
    "dict",
    "float",
    "frozenset",
    "int",
    "list",
    "set",
    "str",
    "tuple",
];

/// Why a value is not a literal expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiteralError {
    #[error("is empty")]
    Empty,
    #[error("is {0} bytes, more than the 1 MiB allowed")]
    TooLong(usize),
    #[error(
        "contains a control character other than a line break or a tab (Python may read it otherwise)"
    )]
    Control,
    #[error(
        "contains a Unicode bidirectional control character, which makes code read otherwise than it runs"
    )]
    Bidi,
    #[error("is not one Python expression (write a tuple in brackets: `(1, 2)`)")]
    NotOneExpression,
    #[error("nests containers deeper than {MAX_LITERAL_DEPTH} levels")]
    TooDeep,
    #[error("holds an f-string, whose `{{...}}` runs code")]
    FString,
    #[error(
        "calls `{0}`; a value may call only frozenset, set, tuple, list, dict, str, bytes, int, float, complex or bool, on one literal"
    )]
    Call(String),
    #[error("holds {0} `{1}`, which is not a literal")]
    NotLiteral(&'static str, String),
}

/// Checks that `source` is a literal expression (see the module doc).
pub(crate) fn check_literal(source: &str) -> Result<(), LiteralError> {
    if source.trim().is_empty() {
        return Err(LiteralError::Empty);
    }
    if source.len() > MAX_LITERAL_BYTES {
        return Err(LiteralError::TooLong(source.len()));
    }
    if source
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(LiteralError::Control);
    }
    if source.chars().any(super::is_bidi_control) {
        return Err(LiteralError::Bidi);
    }
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(|_| LiteralError::NotOneExpression)?;
    let tree = parser
        .parse(source, None)
        .ok_or(LiteralError::NotOneExpression)?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(LiteralError::NotOneExpression);
    }
    let expression = only_expression(root)?;
    walk(expression, source)
}

/// The one expression of a module that is one expression statement (comments aside).
fn only_expression(root: Node<'_>) -> Result<Node<'_>, LiteralError> {
    let mut cursor = root.walk();
    let statements: Vec<Node<'_>> = root
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect();
    let [statement] = statements.as_slice() else {
        return Err(LiteralError::NotOneExpression);
    };
    if statement.kind() != "expression_statement" {
        return Err(LiteralError::NotOneExpression);
    }
    let mut cursor = statement.walk();
    let parts: Vec<Node<'_>> = statement
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect();
    // An assignment is an expression statement to tree-sitter, and a statement to Python.
    match parts.as_slice() {
        [expression] if !expression.kind().ends_with("assignment") => Ok(*expression),
        _ => Err(LiteralError::NotOneExpression),
    }
}

/// Every node under `top` is a literal; iterative, so a deep value cannot overflow the stack.
fn walk(top: Node<'_>, source: &str) -> Result<(), LiteralError> {
    let mut stack = vec![(top, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_LITERAL_DEPTH {
            return Err(LiteralError::TooDeep);
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .collect();
        match node.kind() {
            "integer" | "float" | "true" | "false" | "none" => {}
            "string" => check_string(node, &children, source)?,
            "concatenated_string" => {
                stack.extend(children.iter().map(|c| (*c, depth)));
                if let Some(other) = children.iter().find(|c| c.kind() != "string") {
                    return Err(not_literal(*other, source));
                }
            }
            "list" | "tuple" | "set" | "dictionary" | "parenthesized_expression" => {
                stack.extend(children.iter().map(|c| (*c, depth + 1)));
            }
            "pair" => stack.extend(children.iter().map(|c| (*c, depth))),
            "unary_operator" => {
                let operator = node
                    .child_by_field_name("operator")
                    .map(|o| text(o, source));
                let argument = node.child_by_field_name("argument");
                let number = argument.is_some_and(|a| matches!(a.kind(), "integer" | "float"));
                if !matches!(operator, Some("-" | "+")) || !number {
                    return Err(not_literal(node, source));
                }
            }
            "call" => stack.extend(constructor_arguments(node, source)?.map(|a| (a, depth + 1))),
            _ => return Err(not_literal(node, source)),
        }
    }
    Ok(())
}

/// A plain or bytes string: no f-string (or t-string) prefix, no interpolation.
fn check_string(node: Node<'_>, children: &[Node<'_>], source: &str) -> Result<(), LiteralError> {
    let literal = text(node, source);
    let prefix = &literal[..literal.find(['"', '\'']).unwrap_or(0)];
    if prefix.contains(['f', 'F', 't', 'T']) {
        return Err(LiteralError::FString);
    }
    let plain = |c: &Node<'_>| {
        matches!(
            c.kind(),
            "string_start" | "string_content" | "string_end" | "escape_sequence"
        )
    };
    match children.iter().find(|c| !plain(c)) {
        Some(c) if c.kind() == "interpolation" => Err(LiteralError::FString),
        Some(c) => Err(not_literal(*c, source)),
        None => Ok(()),
    }
}

/// The arguments of a call of a constructor to check in turn: at most one positional
/// argument, a string or a container; keyword arguments only for `dict`.
fn constructor_arguments<'t>(
    call: Node<'t>,
    source: &str,
) -> Result<impl Iterator<Item = Node<'t>>, LiteralError> {
    let function = call.child_by_field_name("function");
    let name = function.map_or("", |f| text(f, source));
    let refused = || LiteralError::Call(flat(name));
    let is_constructor =
        function.is_some_and(|f| f.kind() == "identifier") && CONSTRUCTORS.contains(&name);
    let arguments = call.child_by_field_name("arguments").ok_or_else(refused)?;
    if !is_constructor || arguments.kind() != "argument_list" {
        return Err(refused());
    }
    let mut cursor = arguments.walk();
    let arguments: Vec<Node<'t>> = arguments
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect();
    let positional: Vec<&Node<'t>> = arguments
        .iter()
        .filter(|a| a.kind() != "keyword_argument")
        .collect();
    let keywords = positional.len() < arguments.len();
    let shaped = positional.iter().all(|a| {
        matches!(
            a.kind(),
            "string" | "concatenated_string" | "list" | "tuple" | "set" | "dictionary"
        )
    });
    if positional.len() > 1 || !shaped || (keywords && name != "dict") {
        return Err(refused());
    }
    let values: Vec<Node<'t>> = arguments
        .iter()
        .map(|a| match a.kind() {
            "keyword_argument" => a.child_by_field_name("value").ok_or_else(refused),
            _ => Ok(*a),
        })
        .collect::<Result<_, _>>()?;
    Ok(values.into_iter())
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or_default()
}

/// A short, one-line excerpt of a refused piece, for the message.
fn flat(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}

fn not_literal(node: Node<'_>, source: &str) -> LiteralError {
    let what = match node.kind() {
        "identifier" => "a name",
        "attribute" => "an attribute",
        "subscript" => "a subscript",
        "binary_operator"
        | "boolean_operator"
        | "comparison_operator"
        | "not_operator"
        | "unary_operator" => "an operator",
        "lambda" => "a lambda",
        kind if kind.ends_with("comprehension") || kind == "generator_expression" => {
            "a comprehension"
        }
        "list_splat" | "dictionary_splat" => "an unpacking",
        _ => "an expression",
    };
    LiteralError::NotLiteral(what, flat(text(node, source)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_containers_of_them_are_accepted() {
        for value in [
            "42",
            "-1.5e3",
            "+7",
            "'text'",
            "b'\\x00raw'",
            "r'\\d+' 'more'",
            "\"\"\"triple\nlines\"\"\"",
            "None",
            "(1, 'a', True)",
            "[1, [2, [3]]]",
            "{'a': 1, 'b': [None, False]}",
            "{'x', 'y'}",
            "frozenset({'a', 'b'})",
            "float('inf')",
            "dict(a=1, b='2')",
            "set()",
            "(\n    'a',  # the first\n    'b',\n)",
        ] {
            assert_eq!(check_literal(value), Ok(()), "{value}");
        }
    }

    #[test]
    fn anything_that_computes_or_reaches_a_name_is_refused() {
        let refused = |value: &str| check_literal(value).unwrap_err();
        assert_eq!(
            refused("__import__('os').system('id')"),
            LiteralError::Call("__import__('os').system".into())
        );
        assert_eq!(refused("eval('1')"), LiteralError::Call("eval".into()));
        assert_eq!(
            refused("os.environ"),
            LiteralError::NotLiteral("an attribute", "os.environ".into())
        );
        assert_eq!(
            refused("[x for x in range(3)]"),
            LiteralError::NotLiteral("a comprehension", "[x for x in range(3)]".into())
        );
        assert_eq!(
            refused("f'{open(\"/etc/passwd\").read()}'"),
            LiteralError::FString
        );
        assert_eq!(
            refused("2 ** 100000"),
            LiteralError::NotLiteral("an operator", "2 ** 100000".into())
        );
        assert_eq!(
            refused("{'a': SECRET}"),
            LiteralError::NotLiteral("a name", "SECRET".into())
        );
        assert_eq!(
            refused("list(range(10))"),
            LiteralError::Call("list".into())
        );
        assert_eq!(refused("set(a=1)"), LiteralError::Call("set".into()));
        assert_eq!(
            refused("(lambda: 0)"),
            LiteralError::NotLiteral("a lambda", "lambda: 0".into())
        );
        assert_eq!(
            refused("[*other]"),
            LiteralError::NotLiteral("an unpacking", "*other".into())
        );
    }

    #[test]
    fn more_than_one_expression_or_a_statement_is_refused() {
        for value in [
            "1\nimport os",
            "1; 2",
            "1, 2",
            "x = 1",
            "import os",
            "(1",
            "1 \\",
        ] {
            assert_eq!(
                check_literal(value),
                Err(LiteralError::NotOneExpression),
                "{value:?}"
            );
        }
        assert_eq!(check_literal("  "), Err(LiteralError::Empty));
    }

    #[test]
    fn text_python_could_read_otherwise_is_refused_before_parsing() {
        assert_eq!(
            check_literal("1\r__import__('os')"),
            Err(LiteralError::Control)
        );
        assert_eq!(check_literal("'a\u{c}'"), Err(LiteralError::Control));
        assert_eq!(check_literal("'\u{202e}abc'"), Err(LiteralError::Bidi));
        let long = format!("'{}'", "a".repeat(MAX_LITERAL_BYTES));
        assert_eq!(check_literal(&long), Err(LiteralError::TooLong(long.len())));
        let deep = format!("{}1{}", "[".repeat(80), "]".repeat(80));
        assert_eq!(check_literal(&deep), Err(LiteralError::TooDeep));
    }
}
