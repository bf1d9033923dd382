use super::*;

fn returns(function: &str, args: &str, value: &str, bug: bool) -> Example {
    Example {
        function: function.into(),
        args: args.into(),
        wrap: None,
        expect: Expect::Returns(value.into()),
        bug,
        params: Vec::new(),
    }
}

fn raises(function: &str, args: &str, exception: &str) -> Example {
    Example {
        function: function.into(),
        args: args.into(),
        wrap: None,
        expect: Expect::Raises(exception.into()),
        bug: false,
        params: Vec::new(),
    }
}

#[test]
fn becomes_is_tied_to_the_function_the_request_names() {
    let request = "Add `slugify_title(s)` to the module, built from the two helpers, so that \
                   'A B' becomes 'a-b' and \"Hello  World\" becomes 'hello-world'.";
    let said = |mut e: Example| {
        e.params = vec!["s".into()];
        e
    };
    assert_eq!(
        extract(request),
        vec![
            said(returns("slugify_title", "'A B'", "'a-b'", false)),
            said(returns(
                "slugify_title",
                "\"Hello  World\"",
                "'hello-world'",
                false
            )),
        ]
    );
    // A backticked name is a function too; `lower()` is a builtin method, never the one.
    let request = "Write `kebab` using `lower()`: 'X Y' -> 'x-y'.";
    assert_eq!(
        extract(request),
        vec![returns("kebab", "'X Y'", "'x-y'", false)]
    );
    let request = "Add a function slugify_title that lower-cases, so 'A B' becomes 'a-b'.";
    assert_eq!(
        extract(request),
        vec![returns("slugify_title", "'A B'", "'a-b'", false)]
    );
    // A plain English word after "function" is no name.
    assert!(extract("Add a function that lower-cases, so 'A B' becomes 'a-b'.").is_empty());
    let request = "Add a function `dashes(s)` that turns 'a b c' into 'a-b-c'.";
    assert_eq!(
        extract(request),
        vec![said(returns("dashes", "'a b c'", "'a-b-c'", false))]
    );
}

#[test]
fn a_generators_example_wraps_its_call_in_list() {
    let request = "Add `pairwise_differences(iterable)`: it yields each item minus the one \
                   before it, so `list(pairwise_differences([1, 4, 9, 16]))` is `[3, 5, 7]`.";
    let mut expected = returns("pairwise_differences", "[1, 4, 9, 16]", "[3, 5, 7]", false);
    expected.wrap = Some("list".into());
    // The request's signature names the parameter (checked again with an iterator).
    expected.params = vec!["iterable".into()];
    assert_eq!(extract(request), vec![expected.clone()]);
    assert_eq!(
        expected.describe(),
        "`list(pairwise_differences([1, 4, 9, 16]))` should return `[3, 5, 7]`"
    );
    // A wrapper around anything but one call on literals is no example.
    assert!(extract("so `list(f(x) + g(1))` is `[1]`.").is_empty());
    assert!(extract("so `len(f(1))` is `2`.").is_empty());
}

#[test]
fn a_signature_is_parameters_only_and_the_first_of_its_function() {
    let text =
        "Unlike my_f(a), `f(x)` is 2 and f(iterable, n=2, *rest, key: str = 'k', **kw) holds.";
    assert_eq!(signature(text, "f"), ["x"]);
    let text = "Call f([1, 2]) or obj.f(q); its signature is f(items, /, *, key=None).";
    assert_eq!(signature(text, "f"), ["items", "key"]);
    assert!(signature("f() and f(1) and f(g(x))", "f").is_empty());
    assert!(signature("f(a,\nb)", "f").is_empty());
}

#[test]
fn a_value_with_no_function_named_before_it_is_no_example() {
    assert!(extract("Make it so that 'A B' becomes 'a-b'.").is_empty());
    assert!(extract("Use len() so that 'A B' becomes 'a-b'.").is_empty());
}

#[test]
fn calls_with_a_result_in_many_phrasings() {
    let cases = [
        ("`double(2)` returns `4`.", "double", "2", "4"),
        ("double(2) is 4", "double", "2", "4"),
        ("double(2) gives 4, always", "double", "2", "4"),
        ("double(2) should return 4.", "double", "2", "4"),
        ("double(2) must be 4", "double", "2", "4"),
        ("double(2) == 4", "double", "2", "4"),
        ("double(2) -> 4", "double", "2", "4"),
        ("double(2) → 4", "double", "2", "4"),
        ("double(-2) evaluates to -4.", "double", "-2", "-4"),
        (
            "pair(1, 'a') returns (1, 'a')",
            "pair",
            "1, 'a'",
            "(1, 'a')",
        ),
        (
            "f(x=1, y=[1, 2]) returns {'a': None}",
            "f",
            "x=1, y=[1, 2]",
            "{'a': None}",
        ),
        ("f() returns True", "f", "", "True"),
        ("f(b'ab') returns r'\\d'", "f", "b'ab'", "r'\\d'"),
        ("half(3) is 1.5.", "half", "3", "1.5"),
        (
            "uniq([1, 1]) returns set([1])",
            "uniq",
            "[1, 1]",
            "set([1])",
        ),
        ("f('it''s') returns 1", "f", "'it''s'", "1"),
    ];
    for (request, function, args, value) in cases {
        assert_eq!(
            extract(request),
            vec![returns(function, args, value, false)],
            "{request}"
        );
    }
    assert_eq!(
        extract("double(2) is 4 and double(3) is 6"),
        vec![
            returns("double", "2", "4", false),
            returns("double", "3", "6", false)
        ]
    );
}

#[test]
fn a_bug_report_expects_what_should_be_and_is_marked() {
    let expected = vec![returns("slug", "'A B'", "'a-b'", true)];
    for request in [
        "`slug('A B')` returns 'A B' but should return 'a-b'.",
        "slug('A B') returns 'A B', but it should return 'a-b'",
        "slug('A B') returns 'A B' instead of 'a-b'.",
        "slug('A B') should return 'a-b', not 'A B'.",
        "slug('A B') should return 'a-b' instead of 'A B'",
        "slug('A B') should return 'a-b' but returns 'A B'.",
        "Currently slug('A B') returns 'A B'. It should return 'a-b'.",
        "slug('A B') returns 'A B'. slug('A B') should return 'a-b'.",
    ] {
        assert_eq!(extract(request), expected, "{request}");
    }
    // Words of a bug mark every example as one to reproduce.
    assert_eq!(
        extract("Fix slug: slug('A B') should return 'a-b'."),
        expected
    );
}

#[test]
fn what_a_function_does_now_is_never_taken_for_what_it_should_do() {
    for request in [
        "Currently slug('A B') returns 'A B'.",
        "slug('A B') returns 'A B' but that is odd.",
        "slug('A B') returns 'A B', whereas it ought to return 'a-b'.",
        "slug('A B') returns 'A B' and should return 'a-b' and also 'c'",
        "f(1) returns 1. f(1) returns 2.",
        "f(1) should return 1. f(1) should return 2.",
    ] {
        let found = extract(request);
        assert!(
            found
                .iter()
                .all(|e| e.expect != Expect::Returns("'A B'".into())),
            "{request}: {found:?}"
        );
        assert!(
            found.iter().all(|e| e.call() != "f(1)"),
            "{request}: {found:?}"
        );
    }
}

#[test]
fn exceptions_are_examples_too() {
    assert_eq!(
        extract("parse('') raises ValueError."),
        vec![raises("parse", "''", "ValueError")]
    );
    assert_eq!(
        extract("`parse(None)` should raise a TypeError"),
        vec![raises("parse", "None", "TypeError")]
    );
    let mut said = raises("parse", "''", "ValueError");
    said.params = vec!["s".into()];
    assert_eq!(
        extract("Add `parse(s)`; '' must raise ValueError."),
        vec![said]
    );
    // Not an exception's name: lower case, or a sentence going on.
    assert!(extract("parse('') raises an error").is_empty());
    assert!(extract("parse('') raises ValueError sometimes").is_empty());
}

#[test]
fn doctests_give_returns_and_raises() {
    let request = "Add mean.\n\n```\n>>> mean([1, 2, 3])\n2.0\n>>> mean([])\nTraceback (most recent call last):\n  ...\nstatistics.StatisticsError: no data\n>>> mean([5])\n>>> show(1)\n```\n";
    assert_eq!(
        extract(request),
        vec![
            Example {
                bug: false,
                ..returns("mean", "[1, 2, 3]", "2.0", false)
            },
            raises("mean", "[]", "StatisticsError"),
        ]
    );
    // Output that is not a literal (an object's repr) is no example.
    assert!(extract(">>> make(1)\n<Thing at 0x1>\n").is_empty());
    assert!(extract(">>> make(1) + 1\n2\n").is_empty());
}

#[test]
fn nothing_that_is_not_a_literal_is_kept() {
    for request in [
        "f(x) returns x",
        "f(__import__('os').system('id')) returns 1",
        "f(1) returns __import__('os').system('id')",
        "f(1) returns f'{x}'",
        "f(open('/etc/passwd')) returns 1",
        "f(1) returns 1 + 1",
        "f(1) returns [1, x]",
        "f(1) returns 'a' 'b' c",
        "f(1 # comment) returns 1",
        "f(1) returns '''a'''",
        "f(*[1]) returns 1",
        "f(**{'a': 1}) returns 1",
        "obj.f(1) returns 1",
        "print(1) returns None",
        "`len([1, 2])` is 2",
        "`'a b'.split()` returns ['a', 'b']",
        "sorted([2, 1]) returns [1, 2]",
        "f(1) returns 3 times faster",
        "f(1) returns 3rd",
        "f(1) returns 'a\u{202e}b'",
        "f(1) returns 'a\u{7}'",
        "f(1) returns lambda: 1",
        "f(1) returns 0777",
        "f(1__0) returns 1",
        ">>> f(1)\nTraceback (most recent call last):\nÉrror: x\n",
    ] {
        assert!(
            extract(request).is_empty(),
            "{request}: {:?}",
            extract(request)
        );
    }
}

#[test]
fn hostile_and_odd_text_never_panics() {
    let long_brackets = "(".repeat(20_000);
    let long_quotes = "'".repeat(20_001);
    let nested = format!("f({}1{}) returns 1", "[".repeat(100), "]".repeat(100));
    let huge = format!("f(1) returns '{}'", "a".repeat(5_000));
    for request in [
        "",
        "'",
        "\"",
        "f(",
        "f('",
        "f(1) returns",
        "returns 1",
        ">>>",
        ">>> f(1)",
        "don't ' stop ' f(1) returns 2",
        "日本語 f('日本') returns '日'",
        "f('a\nb') returns 1",
        "\u{0}\u{1}\r\n\r",
        long_brackets.as_str(),
        long_quotes.as_str(),
        nested.as_str(),
        huge.as_str(),
    ] {
        let _ = extract(request);
    }
    // Unicode inside strings is kept; a string never spans a line.
    assert_eq!(
        extract("don't stop: f('日本') returns '日'"),
        vec![returns("f", "'日本'", "'日'", false)]
    );
    assert!(extract(&nested).is_empty(), "too deep for a literal");
    assert!(extract(&huge).is_empty(), "longer than a value may be");
    assert!(extract("f('a\nb') returns 1").is_empty());
}

#[test]
fn many_examples_are_capped() {
    let request: String = (0..100).map(|i| format!("f({i}) is {i}. ")).collect();
    assert_eq!(extract(&request).len(), MAX_EXAMPLES);
}

#[test]
fn examples_read_as_calls_and_words() {
    let example = returns("slug", "'A B'", "'a-b'", false);
    assert_eq!(example.call(), "slug('A B')");
    assert_eq!(example.describe(), "`slug('A B')` should return `'a-b'`");
    assert_eq!(
        raises("p", "''", "ValueError").describe(),
        "`p('')` should raise ValueError"
    );
}

#[test]
fn a_sentence_wrapped_over_two_lines_is_read_whole() {
    let request = "Add `pairwise_differences(iterable)`: it yields each item minus the one before\nit, so `list(pairwise_differences([1, 4, 9, 16]))` is\n`[3, 5, 7]`. Add it to `__all__`.";
    let found = extract(request);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].call(), "list(pairwise_differences([1, 4, 9, 16]))");
    assert_eq!(found[0].expect, Expect::Returns("[3, 5, 7]".into()));
    // A list item, a blank line or a doctest line after the break still ends the sentence.
    assert!(extract("`f(1)` is\n- 2 of them").is_empty());
    assert!(extract("`f(1)` is\n\n2").is_empty());
}

#[test]
fn a_remark_in_brackets_after_an_example_ends_it() {
    let request = "For example `wcljust('x', 4)` returns `'x   '` (the letter\ntakes one cell).";
    let found = extract(request);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].expect, Expect::Returns("'x   '".into()));
    // A bracketed value is still a value.
    assert_eq!(
        extract("`f(1)` returns (1, 2).")[0].expect,
        Expect::Returns("(1, 2)".into())
    );
}
