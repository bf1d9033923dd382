//! The plan drawn as SVG for the HTML report: layout-rs places the boxes and routes the edges
//! (a layered, Sugiyama-style layout), and [`Svg`], our own backend for it, writes the
//! drawing. Our backend, not the crate's SVG writer, so that every node box carries its plan
//! id and status as attributes (`data-node`, `data-status`) that a reader's browser, a link
//! and a test can find, and so that all text is escaped the same way as the rest of the page.
//!
//! Pure: a list of boxes and edges in, an SVG fragment out. A layout that panics inside the
//! crate gives `None`, and the report says the graph could not be drawn instead of failing
//! the assembly.

use super::report::xml_escape;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::{Point, get_size_for_str, pad_shape_scalar};
use layout::core::style::StyleAttr;
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;

/// Up to this many boxes layout-rs also optimises ranks and edge crossings. Above it the
/// optimisers grow far faster than the graph. Measured in a debug build on this project's
/// 2-core machine, on a tree with a skip-level edge per box: optimised, 40 boxes took
/// 0.15 s, 50 took 0.44 s, 100 took 11 s and 150 took 65 s; plain, 100 boxes took 0.05 s,
/// 150 took 0.25 s, 200 took 0.87 s and 400 took 20 s. [`MAX_DRAWN`] stops there.
const OPTIMIZED: usize = 40;

/// Graphs with more boxes than this are not drawn (see [`OPTIMIZED`] for the times).
pub(crate) const MAX_DRAWN: usize = 150;

/// A box of the drawing: a plan node.
pub(crate) struct GraphNode {
    /// Shown in the box.
    pub label: String,
    /// The plan id, written as `data-node`.
    pub id: crate::rpg::NodeId,
    /// Written as `data-status`; also picks the class that colours the box.
    pub status: &'static str,
    /// The box's fill colour (`#rrggbb`).
    pub fill: &'static str,
    /// The page anchor the box links to (without `#`).
    pub anchor: String,
    /// The tooltip.
    pub title: String,
}

/// An edge between two boxes, by index into the node list.
pub(crate) struct GraphEdge {
    pub from: usize,
    pub to: usize,
    /// Dashed: a planned dependency; solid: a child in the plan's hierarchy.
    pub dependency: bool,
}

/// The SVG of `nodes` and `edges`, laid out top to bottom; `None` if there are more than
/// [`MAX_DRAWN`] nodes or layout-rs failed.
pub(crate) fn draw(nodes: &[GraphNode], edges: &[GraphEdge]) -> Option<String> {
    if nodes.len() > MAX_DRAWN {
        return None;
    }
    if nodes.is_empty() {
        return Some(String::new());
    }
    // layout-rs asserts on inputs it cannot handle; an unreadable picture must not cost the
    // run its assembly.
    let placed = std::panic::catch_unwind(|| {
        let mut svg = Svg::default();
        let mut graph = VisualGraph::new(Orientation::TopToBottom);
        let handles: Vec<_> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let look = StyleAttr::new(Color::fast("black"), 1, None, 4, 13);
                let size = pad_shape_scalar(get_size_for_str(&n.label, 13), 12.0);
                // The properties carry only the node's index; attributes are written by us.
                let element = Element::create_with_properties(
                    ShapeKind::new_box(&n.label),
                    look,
                    Orientation::TopToBottom,
                    size,
                    i.to_string(),
                );
                graph.add_node(element)
            })
            .collect();
        for e in edges {
            let (Some(from), Some(to)) = (handles.get(e.from), handles.get(e.to)) else {
                continue;
            };
            let look = StyleAttr::new(Color::fast("gray"), 1, None, 0, 11);
            let arrow = Arrow::new(
                LineEndKind::None,
                LineEndKind::Arrow,
                if e.dependency {
                    layout::core::style::LineStyleKind::Dashed
                } else {
                    layout::core::style::LineStyleKind::Normal
                },
                "",
                &look,
                &None,
                &None,
            );
            graph.add_edge(arrow, *from, *to);
        }
        graph.do_it(false, nodes.len() > OPTIMIZED, false, &mut svg);
        svg
    });
    let svg = placed.ok()?;
    Some(svg.finish(nodes))
}

/// The drawing as it is written: shapes first, text after, every coordinate rounded to a
/// tenth so the page does not change with float noise.
#[derive(Default)]
struct Svg {
    shapes: Vec<Shape>,
    width: f64,
    height: f64,
}

enum Shape {
    /// A node box: its position, size and node index.
    Node {
        xy: Point,
        size: Point,
        index: usize,
    },
    Text {
        xy: Point,
        text: String,
    },
    Path {
        d: String,
        dashed: bool,
    },
}

fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

impl Svg {
    fn grow(&mut self, p: Point) {
        self.width = self.width.max(p.x + 5.0);
        self.height = self.height.max(p.y + 5.0);
    }

    fn finish(&self, nodes: &[GraphNode]) -> String {
        let mut out = format!(
            "<svg class=\"plan\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" role=\"img\">\n",
            w = n(self.width),
            h = n(self.height)
        );
        out.push_str(
            "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
             markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\">\
             <path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#888\"/></marker></defs>\n",
        );
        for shape in &self.shapes {
            match shape {
                Shape::Path { d, dashed } => out.push_str(&format!(
                    "<path class=\"edge\" d=\"{d}\" fill=\"none\" stroke=\"#888\" \
                     stroke-width=\"1\"{} marker-end=\"url(#arrow)\"/>\n",
                    if *dashed {
                        " stroke-dasharray=\"5,4\""
                    } else {
                        ""
                    }
                )),
                Shape::Node { xy, size, index } => {
                    let Some(node) = nodes.get(*index) else {
                        continue;
                    };
                    out.push_str(&format!(
                        "<a href=\"#{}\"><rect class=\"node {}\" data-node=\"{}\" \
                         data-status=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" \
                         fill=\"{}\" stroke=\"#333\" stroke-width=\"1\"><title>{}</title></rect></a>\n",
                        xml_escape(&node.anchor),
                        node.status,
                        xml_escape(&node.id),
                        node.status,
                        n(xy.x),
                        n(xy.y),
                        n(size.x),
                        n(size.y),
                        node.fill,
                        xml_escape(&node.title)
                    ));
                }
                Shape::Text { .. } => {}
            }
        }
        for shape in &self.shapes {
            if let Shape::Text { xy, text } = shape {
                out.push_str(&format!(
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" dominant-baseline=\"central\">{}</text>\n",
                    n(xy.x),
                    n(xy.y),
                    xml_escape(text)
                ));
            }
        }
        out.push_str("</svg>\n");
        out
    }
}

impl RenderBackend for Svg {
    fn draw_rect(
        &mut self,
        xy: Point,
        size: Point,
        _look: &StyleAttr,
        properties: Option<String>,
        _clip: Option<ClipHandle>,
    ) {
        self.grow(xy.add(size));
        if let Some(index) = properties.and_then(|p| p.parse().ok()) {
            self.shapes.push(Shape::Node { xy, size, index });
        }
    }

    fn draw_line(&mut self, start: Point, stop: Point, _look: &StyleAttr, _p: Option<String>) {
        self.grow(start);
        self.grow(stop);
        self.shapes.push(Shape::Path {
            d: format!(
                "M {} {} L {} {}",
                n(start.x),
                n(start.y),
                n(stop.x),
                n(stop.y)
            ),
            dashed: false,
        });
    }

    fn draw_circle(&mut self, xy: Point, size: Point, _look: &StyleAttr, _p: Option<String>) {
        self.grow(xy.add(size));
    }

    fn draw_text(&mut self, xy: Point, text: &str, _look: &StyleAttr) {
        if !text.is_empty() {
            self.shapes.push(Shape::Text {
                xy,
                text: text.to_string(),
            });
        }
    }

    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        dashed: bool,
        _head: (bool, bool),
        _look: &StyleAttr,
        _p: Option<String>,
        _text: &str,
    ) {
        // As layout-rs's own writer reads it: the first pair is the exit point and its control
        // point, every later pair an entry point's control point and the point.
        let [first, second, rest @ ..] = path else {
            return;
        };
        for (a, b) in path {
            self.grow(*a);
            self.grow(*b);
        }
        let mut d = format!(
            "M {} {} C {} {}, {} {}, {} {}",
            n(first.0.x),
            n(first.0.y),
            n(first.1.x),
            n(first.1.y),
            n(second.0.x),
            n(second.0.y),
            n(second.1.x),
            n(second.1.y)
        );
        for (a, b) in rest {
            d.push_str(&format!(" S {} {}, {} {}", n(a.x), n(a.y), n(b.x), n(b.y)));
        }
        self.shapes.push(Shape::Path { d, dashed });
    }

    fn create_clip(&mut self, _xy: Point, _size: Point, _rounded_px: usize) -> ClipHandle {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, status: &'static str) -> GraphNode {
        GraphNode {
            label: format!("{id} <x>"),
            id: id.into(),
            status,
            fill: "#2e9d4f",
            anchor: format!("n-{id}"),
            title: id.into(),
        }
    }

    #[test]
    fn every_node_is_one_box_with_its_id_and_status_and_escaped_text() {
        let nodes = vec![
            node("a", "passed"),
            node("b", "failed"),
            node("c\"", "skipped"),
        ];
        let edges = vec![
            GraphEdge {
                from: 0,
                to: 1,
                dependency: false,
            },
            GraphEdge {
                from: 1,
                to: 2,
                dependency: true,
            },
        ];
        let svg = draw(&nodes, &edges).unwrap();
        assert_eq!(svg.matches("<rect class=\"node").count(), 3);
        assert!(svg.contains("data-node=\"a\" data-status=\"passed\""));
        assert!(svg.contains("data-node=\"c&quot;\" data-status=\"skipped\""));
        assert!(svg.contains("a &lt;x&gt;"));
        assert!(!svg.contains("<x>"));
        assert!(
            svg.contains("stroke-dasharray"),
            "the dependency edge is dashed"
        );
        assert_eq!(svg.matches("class=\"edge\"").count(), 2);
    }

    #[test]
    fn the_same_graph_draws_the_same_bytes() {
        let nodes = || {
            vec![
                node("a", "passed"),
                node("b", "passed"),
                node("c", "passed"),
            ]
        };
        let edges = || {
            vec![
                GraphEdge {
                    from: 0,
                    to: 1,
                    dependency: false,
                },
                GraphEdge {
                    from: 0,
                    to: 2,
                    dependency: false,
                },
            ]
        };
        assert_eq!(draw(&nodes(), &edges()), draw(&nodes(), &edges()));
    }

    #[test]
    fn no_nodes_draw_nothing() {
        assert_eq!(draw(&[], &[]).as_deref(), Some(""));
    }

    #[test]
    fn a_graph_over_the_limit_is_not_drawn() {
        let nodes: Vec<GraphNode> = (0..=MAX_DRAWN)
            .map(|i| GraphNode {
                label: format!("f{i}"),
                id: format!("n{i}").into(),
                status: "passed",
                fill: "#fff",
                anchor: String::new(),
                title: String::new(),
            })
            .collect();
        assert_eq!(draw(&nodes, &[]), None);
    }
}
