//! Assembling a report (pure given the loaded data): the grid's shape, the views selected from
//! it, their sections, and the templates — HTML escaped by minijinja's HTML auto-escape,
//! Markdown by ours (`markdown.rs`), so user text is text in both.

use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, context, escape_formatter};

use super::data::ReportData;
use super::markdown;
use super::palette::Palette;
use super::shape::Grid;
use super::views::{self, Context, Section};
use crate::manifest::Manifest;

/// A rendered report: the HTML page, the Markdown page and the charts as SVG files.
pub struct Rendered {
    pub html: String,
    pub markdown: String,
    /// (file name, SVG) for the Markdown report.
    pub charts: Vec<(String, String)>,
}

const MARKDOWN: &str = "markdown";

/// What one template may make the engine do: minijinja's fuel, one unit per instruction or per
/// 64 bytes written or built. 2^24 is about 16.7 million instructions or 1 GiB of output — the
/// built-in templates use a small fraction of it on the largest shipped reports — so a template
/// that loops without end or renders unbounded output stops with an error instead of exhausting
/// memory (issue 37).
pub const TEMPLATE_FUEL: u64 = 1 << 24;

/// How deeply template calls (macros, includes, recursive loops) may nest.
pub const TEMPLATE_RECURSION: usize = 64;

/// A template environment escaping `.html` templates as HTML and `.md` ones as Markdown, with a
/// `code` filter for Markdown code spans.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_fuel(Some(TEMPLATE_FUEL));
    env.set_recursion_limit(TEMPLATE_RECURSION);
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".md") {
            AutoEscape::Custom(MARKDOWN.into())
        } else if name.ends_with(".html") {
            AutoEscape::Html
        } else {
            AutoEscape::None
        }
    });
    env.set_formatter(|out, state, value| {
        if matches!(state.auto_escape(), AutoEscape::Custom(name) if name == MARKDOWN) {
            if value.is_safe() {
                return escape_formatter(out, &mut *state, value);
            }
            if value.is_none() || value.is_undefined() {
                return Ok(());
            }
            out.write_str(&markdown::escape(&value.to_string()))
                .map_err(|e| {
                    minijinja::Error::new(minijinja::ErrorKind::WriteFailure, e.to_string())
                })
        } else {
            escape_formatter(out, state, value)
        }
    });
    env.add_filter("code", |v: String| {
        Value::from_safe_string(markdown::code(&v))
    });
    env
}

/// A chart's alternative text: the first sentence of its caption. A sentence ends at ". "
/// outside parentheses and not after an abbreviation ("expansion factor (Eq. 2) by scenario",
/// "e.g. a cap" run on).
fn alt(caption: &str) -> String {
    const ABBREVIATIONS: [&str; 6] = ["Eq", "Fig", "e.g", "i.e", "cf", "vs"];
    let mut depth = 0i32;
    let mut end = caption.len();
    for (i, c) in caption.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '.' if depth <= 0 && caption[i + 1..].starts_with(' ') => {
                let before = &caption[..i];
                let word = before
                    .rsplit(|c: char| c.is_whitespace() || c == '(')
                    .next()
                    .unwrap_or("");
                if !ABBREVIATIONS.contains(&word) {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    caption[..end].trim_end_matches('.').to_string()
}

fn section_value(s: &Section, name: &str) -> Value {
    context! {
        id => s.id.clone(),
        heading => s.heading.clone(),
        intro => s.intro.clone(),
        findings => s.findings.iter().map(|f| context! { title => f.title.clone(), text => f.text.clone() }).collect::<Vec<_>>(),
        tables => s.tables.iter().map(|t| context! {
            caption => t.caption.clone(),
            headers => t.headers.clone(),
            rows => t.rows.clone(),
            text_columns => t.text_columns,
            folded => t.folded,
        }).collect::<Vec<_>>(),
        charts => s.charts.iter().map(|c| context! {
            id => c.id.clone(),
            alt => alt(&c.caption),
            caption => c.caption.clone(),
            file => Value::from_safe_string(format!("{name}-{}.svg", c.id)),
            svg => c.svg.clone(),
        }).collect::<Vec<_>>(),
    }
}

pub fn render(
    manifest: &Manifest,
    manifest_text: &str,
    data: &ReportData,
    rendered_at: &str,
    templates: (&str, &str),
) -> Result<Rendered, String> {
    let name = &manifest.name;
    let grid = Grid::new(data);
    let palette = Palette::new(&grid.shape);
    let classes: Vec<String> = manifest
        .cells
        .first()
        .map(|c| {
            c.metrics
                .size_classes
                .0
                .iter()
                .map(|k| k.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let ctx = Context {
        grid: &grid,
        data,
        palette: &palette,
        classes: &classes,
        reproduces: manifest.report.reproduces.as_deref(),
    };
    let selected = views::select(&grid.shape);
    let mut sections = views::build(&selected, &ctx);
    // Chart ids are file names of the Markdown report: make them unique.
    let mut seen: Vec<String> = Vec::new();
    for c in sections.iter_mut().flat_map(|s| s.charts.iter_mut()) {
        let mut id = c.id.clone();
        let mut k = 2;
        while seen.contains(&id) {
            id = format!("{}-{k}", c.id);
            k += 1;
        }
        seen.push(id.clone());
        c.id = id;
    }
    let table = views::configurations_table(&ctx);

    let meta = |k: &str| {
        data.metadata
            .get(k)
            .cloned()
            .unwrap_or_else(|| "unknown".into())
    };
    let charts: Vec<(String, String, String, String)> = sections
        .iter()
        .flat_map(|s| s.charts.iter())
        .map(|c| {
            (
                c.id.clone(),
                c.caption.clone(),
                format!("{name}-{}.svg", c.id),
                c.svg.clone(),
            )
        })
        .collect();
    let ctx_value = context! {
        experiment => name,
        description => manifest.description.clone(),
        manifest_path => manifest.path.display().to_string(),
        manifest_hash => meta("schedlab.manifest_hash"),
        manifest_text => manifest_text,
        version => meta("schedlab.version"),
        model_version => meta("schedlab.model_version"),
        commit => meta("schedlab.commit"),
        rendered_at => rendered_at,
        provenance => data.provenance.iter().map(|p| context! { workload => p.workload.clone(), file => p.file.clone(), lines => p.lines.clone() }).collect::<Vec<_>>(),
        sections => sections.iter().map(|s| section_value(s, name)).collect::<Vec<_>>(),
        table => context! { headers => table.headers.clone(), rows => table.rows.clone() },
        charts => charts.iter().map(|(id, caption, file, svg)| context! { id => id, caption => caption, file => Value::from_safe_string(file.clone()), svg => svg }).collect::<Vec<_>>(),
    };
    let mut env = environment();
    env.add_template("report.html", templates.0)
        .map_err(|e| format!("HTML template: {e}"))?;
    env.add_template("report.md", templates.1)
        .map_err(|e| format!("Markdown template: {e}"))?;
    let html =
        rendered(&env, "report.html", &ctx_value).map_err(|e| format!("HTML template: {e}"))?;
    let markdown =
        rendered(&env, "report.md", &ctx_value).map_err(|e| format!("Markdown template: {e}"))?;
    Ok(Rendered {
        html,
        markdown,
        charts: charts
            .into_iter()
            .map(|(_, _, file, svg)| (file, svg))
            .collect(),
    })
}

/// One template rendered within its budget; running out of it is said in words.
fn rendered(env: &Environment<'_>, name: &str, ctx: &Value) -> Result<String, String> {
    env.get_template(name)
        .and_then(|t| t.render(ctx))
        .map_err(|e| match e.kind() {
            minijinja::ErrorKind::OutOfFuel => format!(
                "rendering stopped at the template's budget ({TEMPLATE_FUEL} steps of 64 output \
                 bytes or one instruction each, about 1 GiB of output): the template loops too \
                 long or renders unbounded output{}",
                e.line().map_or(String::new(), |l| format!(" (line {l})"))
            ),
            _ if e.to_string().contains("recursion limit exceeded") => format!(
                "template calls nest deeper than {TEMPLATE_RECURSION} levels (a macro or include \
                 that calls itself without end?): {e}"
            ),
            _ => e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alt_text_is_the_first_sentence_whole() {
        // Before: "Node-seconds-weighted expansion factor (Eq" — cut inside the parenthesis.
        assert_eq!(
            alt(
                "Node-seconds-weighted expansion factor (Eq. 2) by scenario, may-2004. The paper's Graphs 10–11 show the same."
            ),
            "Node-seconds-weighted expansion factor (Eq. 2) by scenario, may-2004"
        );
        assert_eq!(
            alt("Mean wait by scheduler. One run per configuration."),
            "Mean wait by scheduler"
        );
        assert_eq!(
            alt("A cap, e.g. 3,072 node-h, shown. More."),
            "A cap, e.g. 3,072 node-h, shown"
        );
        assert_eq!(alt("No full stop"), "No full stop");
        assert_eq!(alt("Ends with one."), "Ends with one");
    }

    #[test]
    fn markdown_templates_escape_user_text_and_html_ones_escape_html() {
        let mut env = environment();
        env.add_template("t.md", "{{ x }} {{ y|code }}").unwrap();
        env.add_template("t.html", "{{ x }}").unwrap();
        let md = env
            .get_template("t.md")
            .unwrap()
            .render(context! { x => "<b>*hi*</b> | x", y => "a`b" })
            .unwrap();
        assert_eq!(md, "&lt;b&gt;\\*hi\\*&lt;/b&gt; \\| x ``a`b``");
        let html = env
            .get_template("t.html")
            .unwrap()
            .render(context! { x => "<b>" })
            .unwrap();
        assert_eq!(html, "&lt;b&gt;");
    }
}
