//! A strict reader of Prometheus' text exposition format 0.0.4, so that a test fails on any
//! `/metrics` answer Prometheus itself would refuse (or would read otherwise than meant).
//!
//! Checked, line by line (an error names the line): every line is empty, a comment (`# HELP
//! name text`, `# TYPE name counter|gauge|histogram|summary|untyped`, or another `#` line, which
//! the format ignores), or a sample `name{label="value",...} value [timestamp]`. Metric names
//! match `[a-zA-Z_:][a-zA-Z0-9_:]*`, label names `[a-zA-Z_][a-zA-Z0-9_]*` (not `__`-prefixed),
//! label values escape only `\\`, `\"` and `\n`, HELP text only `\\` and `\n`; values are
//! floats (`+Inf`, `-Inf`, `NaN` included), timestamps integers. A family has at most one HELP
//! and one TYPE line, its TYPE comes before its samples, and its lines form one group. A
//! histogram's samples are `<name>_bucket` (with `le`), `<name>_sum` and `<name>_count`; a
//! summary's `<name>` (with `quantile`), `<name>_sum` and `<name>_count`. The same series twice
//! is an error, and so is a negative counter.
//!
//! Checked over the whole text: each histogram series has an `le="+Inf"` bucket equal to its
//! `_count`, and its buckets never decrease as `le` grows. The text ends with a line feed.

use std::collections::{BTreeMap, HashMap, HashSet};

/// One sample line: a series and its value (the timestamp, if any, is checked and dropped).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Reads `text` strictly (see the module docs); the error names the line it is about.
pub fn parse(text: &str) -> Result<Vec<Sample>, String> {
    if !text.is_empty() && !text.ends_with('\n') {
        return Err("the last line does not end with a line feed".to_owned());
    }
    let mut reader = Reader::default();
    for (index, line) in text.split_terminator('\n').enumerate() {
        let number = index + 1;
        reader
            .line(line, number)
            .map_err(|e| format!("line {number}: {e}: {line:?}"))?;
    }
    reader.finish()
}

/// The sum of the samples named `name` whose labels include every pair of `labels` (other
/// labels may differ: `&[("route", r)]` adds up every method and status of route `r`); `None`
/// when no sample matches.
pub fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut matching = samples.iter().filter(|s| {
        s.name == name
            && labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).is_some_and(|have| have == v))
    });
    let first = matching.next()?.value;
    Some(matching.fold(first, |sum, s| sum + s.value))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
}

impl Kind {
    fn parse(token: &str) -> Option<Kind> {
        Some(match token {
            "counter" => Kind::Counter,
            "gauge" => Kind::Gauge,
            "histogram" => Kind::Histogram,
            "summary" => Kind::Summary,
            "untyped" => Kind::Untyped,
            _ => return None,
        })
    }
}

/// One histogram series (its labels without `le`), checked once every line is read.
#[derive(Default)]
struct HistogramSeries {
    first_line: usize,
    buckets: Vec<(f64, f64)>,
    count: Option<f64>,
}

#[derive(Default)]
struct Reader {
    types: HashMap<String, Kind>,
    helps: HashSet<String>,
    /// Families that have samples already: their TYPE can no longer come.
    sampled: HashSet<String>,
    /// The family the last HELP, TYPE or sample line was about, and those whose group ended.
    current: Option<String>,
    closed: HashSet<String>,
    series: HashSet<String>,
    histograms: BTreeMap<(String, String), HistogramSeries>,
    samples: Vec<Sample>,
}

impl Reader {
    fn line(&mut self, line: &str, number: usize) -> Result<(), String> {
        if line.is_empty() {
            return Ok(());
        }
        if line.contains('\r') {
            return Err("carriage return in a line (lines end with a line feed only)".to_owned());
        }
        if let Some(comment) = line.strip_prefix('#') {
            return self.comment(comment);
        }
        self.sample(line, number)
    }

    /// Lines of one family come together: a family seen again after another began is an error.
    fn enter_family(&mut self, family: &str) -> Result<(), String> {
        if self.current.as_deref() == Some(family) {
            return Ok(());
        }
        if self.closed.contains(family) {
            return Err(format!(
                "the lines of `{family}` are not one group (another family came between them)"
            ));
        }
        if let Some(previous) = self.current.take() {
            self.closed.insert(previous);
        }
        self.current = Some(family.to_owned());
        Ok(())
    }

    fn comment(&mut self, rest: &str) -> Result<(), String> {
        let mut c = Cursor::new(rest);
        c.blanks();
        let keyword = c.token();
        if keyword != "HELP" && keyword != "TYPE" {
            // Any other comment is ignored by the format.
            return Ok(());
        }
        if c.blanks() == 0 {
            return Err(format!("`{keyword}` without a metric name"));
        }
        let name = metric_name(&mut c)?;
        if !c.at_end() && !c.at_blank() {
            return Err(format!("invalid metric name in `{keyword}`"));
        }
        c.blanks();
        self.enter_family(&name)?;
        if keyword == "HELP" {
            help_text(c.rest())?;
            if !self.helps.insert(name.clone()) {
                return Err(format!("a second HELP line for `{name}`"));
            }
            return Ok(());
        }
        let token = c.token();
        let kind = Kind::parse(token).ok_or_else(|| format!("unknown metric type `{token}`"))?;
        c.blanks();
        if !c.at_end() {
            return Err("text after the metric type".to_owned());
        }
        if self.types.contains_key(&name) {
            return Err(format!("a second TYPE line for `{name}`"));
        }
        let mut own_samples = vec![name.clone()];
        if matches!(kind, Kind::Histogram | Kind::Summary) {
            own_samples.extend(["_bucket", "_sum", "_count"].map(|s| format!("{name}{s}")));
        }
        if let Some(early) = own_samples.iter().find(|n| self.sampled.contains(*n)) {
            return Err(format!(
                "TYPE of `{name}` after samples of it (`{early}`): it must come first"
            ));
        }
        self.types.insert(name, kind);
        Ok(())
    }

    /// The family a sample name belongs to: `x_bucket` of histogram `x`, `x_sum` and `x_count`
    /// of histogram or summary `x`, else the name itself.
    fn family_of(&self, name: &str) -> (String, Kind) {
        let suffixes: [(&str, &[Kind]); 3] = [
            ("_bucket", &[Kind::Histogram]),
            ("_sum", &[Kind::Histogram, Kind::Summary]),
            ("_count", &[Kind::Histogram, Kind::Summary]),
        ];
        for (suffix, kinds) in suffixes {
            if let Some(base) = name.strip_suffix(suffix)
                && let Some(kind) = self.types.get(base)
                && kinds.contains(kind)
            {
                return (base.to_owned(), *kind);
            }
        }
        let kind = self.types.get(name).copied().unwrap_or(Kind::Untyped);
        (name.to_owned(), kind)
    }

    fn sample(&mut self, line: &str, number: usize) -> Result<(), String> {
        let mut c = Cursor::new(line);
        let name = metric_name(&mut c)?;
        let mut separated = c.blanks() > 0;
        let mut labels = BTreeMap::new();
        if c.peek() == Some('{') {
            c.bump();
            label_set(&mut c, &mut labels)?;
            separated = c.blanks() > 0;
        }
        if c.at_end() {
            return Err("a sample without a value".to_owned());
        }
        if !separated {
            return Err("invalid metric name or label set (no blank before the value)".to_owned());
        }
        let value = parse_value(c.token())?;
        if c.blanks() > 0 && !c.at_end() {
            let timestamp = c.token();
            timestamp.parse::<i64>().map_err(|_| {
                format!("invalid timestamp `{timestamp}` (milliseconds, an integer)")
            })?;
            c.blanks();
        }
        if !c.at_end() {
            return Err("text after the sample's value and timestamp".to_owned());
        }

        let (family, kind) = self.family_of(&name);
        self.enter_family(&family)?;
        self.sampled.insert(name.clone());
        match kind {
            Kind::Counter if value < 0.0 => {
                return Err(format!("counter `{name}` is negative"));
            }
            Kind::Histogram => self.histogram_sample(&family, &name, &labels, value, number)?,
            Kind::Summary => {
                if name == family {
                    let quantile = labels
                        .get("quantile")
                        .ok_or_else(|| format!("summary sample `{name}` without `quantile`"))?;
                    let q = parse_value(quantile)
                        .map_err(|e| format!("label quantile of `{name}`: {e}"))?;
                    if !(0.0..=1.0).contains(&q) {
                        return Err(format!("quantile {q} of `{name}` is not within 0..1"));
                    }
                } else if labels.contains_key("quantile") {
                    return Err(format!("`{name}` has a `quantile` label"));
                }
            }
            _ => {}
        }
        let key = format!("{name}{labels:?}");
        if !self.series.insert(key) {
            return Err(format!("the same series of `{name}` twice"));
        }
        self.samples.push(Sample {
            name,
            labels,
            value,
        });
        Ok(())
    }

    fn histogram_sample(
        &mut self,
        family: &str,
        name: &str,
        labels: &BTreeMap<String, String>,
        value: f64,
        number: usize,
    ) -> Result<(), String> {
        let suffix = &name[family.len()..];
        let mut series_labels = labels.clone();
        let le = series_labels.remove("le");
        let entry = self
            .histograms
            .entry((family.to_owned(), format!("{series_labels:?}")))
            .or_insert_with(|| HistogramSeries {
                first_line: number,
                ..HistogramSeries::default()
            });
        match (suffix, le) {
            ("_bucket", Some(le)) => {
                let bound = parse_value(&le).map_err(|e| format!("label le of `{name}`: {e}"))?;
                if bound.is_nan() {
                    return Err(format!("label le of `{name}` is NaN"));
                }
                entry.buckets.push((bound, value));
            }
            ("_bucket", None) => return Err(format!("histogram bucket `{name}` without `le`")),
            ("_count", None) => entry.count = Some(value),
            ("_sum", None) => {}
            (_, Some(_)) => return Err(format!("`{name}` has an `le` label")),
            _ => {
                return Err(format!(
                    "histogram `{family}` has a sample `{name}` (only _bucket, _sum, _count)"
                ));
            }
        }
        if value < 0.0 {
            return Err(format!("`{name}` is negative"));
        }
        Ok(())
    }

    fn finish(self) -> Result<Vec<Sample>, String> {
        for ((family, labels), series) in self.histograms {
            let at = format!(
                "histogram `{family}` {labels} (from line {})",
                series.first_line
            );
            let mut buckets = series.buckets;
            buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
            for pair in buckets.windows(2) {
                if pair[0].0 == pair[1].0 {
                    return Err(format!("{at}: two buckets le={}", pair[0].0));
                }
                if pair[1].1 < pair[0].1 {
                    return Err(format!(
                        "{at}: bucket le={} counts {} but le={} counts {} (buckets are cumulative)",
                        pair[1].0, pair[1].1, pair[0].0, pair[0].1
                    ));
                }
            }
            let inf = buckets
                .last()
                .filter(|(le, _)| *le == f64::INFINITY)
                .map(|(_, n)| *n)
                .ok_or_else(|| format!("{at}: no bucket le=\"+Inf\""))?;
            let count = series
                .count
                .ok_or_else(|| format!("{at}: no `{family}_count`"))?;
            if inf != count {
                return Err(format!(
                    "{at}: bucket le=\"+Inf\" counts {inf} but `{family}_count` is {count}"
                ));
            }
        }
        Ok(self.samples)
    }
}

/// The `{...}` of a sample, from just after `{` to just after `}`.
fn label_set(c: &mut Cursor<'_>, labels: &mut BTreeMap<String, String>) -> Result<(), String> {
    loop {
        c.blanks();
        if c.peek() == Some('}') {
            c.bump();
            return Ok(());
        }
        let name = label_name(c)?;
        c.blanks();
        if c.bump() != Some('=') {
            return Err(format!("expected `=` after label name `{name}`"));
        }
        c.blanks();
        if c.bump() != Some('"') {
            return Err(format!("the value of label `{name}` is not quoted"));
        }
        let value = label_value(c)?;
        if name.starts_with("__") {
            return Err(format!("label name `{name}` is reserved (starts with __)"));
        }
        if labels.insert(name.clone(), value).is_some() {
            return Err(format!("label `{name}` twice"));
        }
        c.blanks();
        match c.bump() {
            Some(',') => {}
            Some('}') => return Ok(()),
            Some(other) => {
                return Err(format!("expected `,` or `}}` after a label, not `{other}`"));
            }
            None => return Err("unterminated label set".to_owned()),
        }
    }
}

/// A label value, from just after its opening quote to just after its closing one.
fn label_value(c: &mut Cursor<'_>) -> Result<String, String> {
    let mut out = String::new();
    loop {
        match c.bump() {
            None => return Err("unterminated label value".to_owned()),
            Some('"') => return Ok(out),
            Some('\\') => match c.bump() {
                Some('\\') => out.push('\\'),
                Some('"') => out.push('"'),
                Some('n') => out.push('\n'),
                Some(other) => {
                    return Err(format!("invalid escape `\\{other}` in a label value"));
                }
                None => return Err("unterminated label value".to_owned()),
            },
            Some(ch) => out.push(ch),
        }
    }
}

/// HELP text escapes only `\\` and `\n`.
fn help_text(text: &str) -> Result<(), String> {
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        if ch == '\\' {
            match chars.next() {
                Some('\\' | 'n') => {}
                Some(other) => return Err(format!("invalid escape `\\{other}` in HELP text")),
                None => return Err("HELP text ends with a lone backslash".to_owned()),
            }
        }
    }
    Ok(())
}

fn metric_name(c: &mut Cursor<'_>) -> Result<String, String> {
    let name = c.take_while(|i, ch| {
        ch.is_ascii_alphabetic() || ch == '_' || ch == ':' || (i > 0 && ch.is_ascii_digit())
    });
    if name.is_empty() {
        return Err("expected a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)".to_owned());
    }
    Ok(name.to_owned())
}

fn label_name(c: &mut Cursor<'_>) -> Result<String, String> {
    let name = c.take_while(|i, ch| {
        ch.is_ascii_alphabetic() || ch == '_' || (i > 0 && ch.is_ascii_digit())
    });
    if name.is_empty() {
        return Err("expected a label name ([a-zA-Z_][a-zA-Z0-9_]*)".to_owned());
    }
    Ok(name.to_owned())
}

/// A sample value: `+Inf`, `-Inf`, `NaN`, or a decimal float (`1`, `-0.5`, `1.5e-3`).
fn parse_value(token: &str) -> Result<f64, String> {
    match token {
        "+Inf" | "Inf" => return Ok(f64::INFINITY),
        "-Inf" => return Ok(f64::NEG_INFINITY),
        "NaN" => return Ok(f64::NAN),
        _ => {}
    }
    let unsigned = token.strip_prefix(['+', '-']).unwrap_or(token);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (digits(int) || int.is_empty())
                && (digits(frac) || frac.is_empty())
                && !(int.is_empty() && frac.is_empty())
        }
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    if !mantissa_ok || !exponent_ok {
        return Err(format!("invalid value `{token}`"));
    }
    token
        .parse::<f64>()
        .map_err(|_| format!("invalid value `{token}`"))
}

/// A position in one line.
struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Self { s, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let ch = self.peek()?;
        self.pos += ch.len_utf8();
        Some(ch)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn at_blank(&self) -> bool {
        matches!(self.peek(), Some(' ' | '\t'))
    }

    /// Skips spaces and tabs; how many.
    fn blanks(&mut self) -> usize {
        self.take_while(|_, ch| ch == ' ' || ch == '\t').len()
    }

    /// Up to the next blank or the end of the line.
    fn token(&mut self) -> &'a str {
        self.take_while(|_, ch| ch != ' ' && ch != '\t')
    }

    /// The longest run of characters `keep(index in the run, char)` accepts.
    fn take_while(&mut self, keep: impl Fn(usize, char) -> bool) -> &'a str {
        let start = self.pos;
        let mut index = 0;
        while let Some(ch) = self.peek() {
            if !keep(index, ch) {
                break;
            }
            self.pos += ch.len_utf8();
            index += 1;
        }
        &self.s[start..self.pos]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"# HELP http_requests_total Requests, by route \\ method.\nSecond line.
# TYPE http_requests_total counter
http_requests_total{method="GET",route="/villas/{id}",status="2xx"} 3
http_requests_total{method="POST",route="/a\"b\\c\nd",status="5xx",} 1 1712345678000

# This comment is ignored.
# TYPE in_flight gauge
in_flight -2.5e-1
# TYPE untyped_one untyped
untyped_one NaN
no_type_at_all:ratio +Inf
# HELP latency_seconds Latency.
# TYPE latency_seconds histogram
latency_seconds_bucket{route="/a",le="0.1"} 1
latency_seconds_bucket{route="/a",le="1"} 2
latency_seconds_bucket{route="/a",le="+Inf"} 4
latency_seconds_sum{route="/a"} 7.25
latency_seconds_count{route="/a"} 4
latency_seconds_bucket{route="/b",le="+Inf"} 0
latency_seconds_sum{route="/b"} 0
latency_seconds_count{route="/b"} 0
# TYPE wait_seconds summary
wait_seconds{quantile="0.5"} 0.2
wait_seconds{quantile="0.99"} 1
wait_seconds_sum 3
wait_seconds_count 9
"#;

    #[test]
    fn a_good_exposition_reads_as_written() {
        let samples = parse(GOOD).unwrap();
        assert_eq!(samples.len(), 17);
        let odd = &samples[1];
        assert_eq!(odd.labels["route"], "/a\"b\\c\nd");
        assert_eq!(odd.value, 1.0);
        assert_eq!(value(&samples, "in_flight", &[]), Some(-0.25));
        assert!(value(&samples, "untyped_one", &[]).unwrap().is_nan());
        assert_eq!(
            value(&samples, "no_type_at_all:ratio", &[]),
            Some(f64::INFINITY)
        );
        // The sum over the series that carry the given labels, whatever their others.
        assert_eq!(value(&samples, "http_requests_total", &[]), Some(4.0));
        assert_eq!(
            value(&samples, "http_requests_total", &[("method", "GET")]),
            Some(3.0)
        );
        assert_eq!(
            value(
                &samples,
                "http_requests_total",
                &[("method", "GET"), ("route", "/villas/{id}")]
            ),
            Some(3.0)
        );
        assert_eq!(
            value(&samples, "http_requests_total", &[("method", "PUT")]),
            None
        );
        assert_eq!(value(&samples, "nothing", &[]), None);
        assert_eq!(
            value(&samples, "latency_seconds_count", &[("route", "/a")]),
            Some(4.0)
        );
        assert_eq!(
            value(&samples, "latency_seconds_bucket", &[("le", "+Inf")]),
            Some(4.0)
        );
        assert_eq!(value(&samples, "wait_seconds_count", &[]), Some(9.0));
    }

    #[test]
    fn empty_text_and_blank_lines_are_no_samples() {
        assert_eq!(parse("").unwrap(), vec![]);
        assert_eq!(parse("\n\n").unwrap(), vec![]);
        let spaced = parse("a  {  x = \"1\" , y=\"2\" }  5\t 17 \n").unwrap();
        assert_eq!(spaced[0].labels.len(), 2);
        assert_eq!(spaced[0].value, 5.0);
    }

    /// Each bad input is refused, with the line it is on.
    #[test]
    fn bad_expositions_are_refused_with_their_line() {
        let cases: &[(&str, &str, &str)] = &[
            ("a 1", "line feed", "no final line feed"),
            ("a 1\r\n", "carriage return", "CRLF"),
            (
                "1a 1\n",
                "line 1: expected a metric name",
                "metric name starts with a digit",
            ),
            (
                "a-b 1\n",
                "no blank before the value",
                "dash in a metric name",
            ),
            (
                "a{1x=\"v\"} 1\n",
                "expected a label name",
                "label name starts with a digit",
            ),
            ("a{x:y=\"v\"} 1\n", "expected `=`", "colon in a label name"),
            ("a{__x=\"v\"} 1\n", "reserved", "reserved label name"),
            (
                "a{x=\"v\",x=\"w\"} 1\n",
                "label `x` twice",
                "duplicated label",
            ),
            ("a{x=v} 1\n", "not quoted", "unquoted label value"),
            ("a{x=\"v} 1\n", "unterminated", "unterminated label value"),
            (
                "a{x=\"\\t\"} 1\n",
                "invalid escape",
                "bad escape in a label value",
            ),
            ("a{x=\"v\" 1\n", "expected `,` or `}`", "unclosed label set"),
            (
                "a{x=\"v\"}1\n",
                "no blank before the value",
                "value glued to the labels",
            ),
            ("a\n", "without a value", "no value"),
            ("a one\n", "invalid value `one`", "word as a value"),
            ("a 0x10\n", "invalid value", "hex value"),
            ("a inf\n", "invalid value", "lower-case inf"),
            (
                "a 1.\u{2009}\n",
                "invalid value",
                "odd character glued to the value",
            ),
            ("a 1 12.5\n", "invalid timestamp", "fractional timestamp"),
            ("a 1 2 3\n", "text after", "three tokens"),
            ("# TYPE a counte\n", "unknown metric type", "unknown type"),
            (
                "# TYPE a counter extra\n",
                "text after the metric type",
                "text after the type",
            ),
            (
                "# TYPE a gauge\n# TYPE a gauge\n",
                "line 2: a second TYPE",
                "two TYPE lines",
            ),
            (
                "# HELP a x\n# HELP a y\n",
                "line 2: a second HELP",
                "two HELP lines",
            ),
            ("# HELP a bad \\q\n", "invalid escape", "bad escape in HELP"),
            ("# HELP a{b} x\n", "invalid metric name", "labels in HELP"),
            (
                "a 1\n# TYPE a gauge\n",
                "line 2: TYPE of `a` after samples",
                "late TYPE",
            ),
            (
                "h_count 1\n# TYPE h histogram\n",
                "after samples of it",
                "late histogram TYPE",
            ),
            (
                "a 1\nb 1\na{x=\"1\"} 2\n",
                "line 3: the lines of `a` are not one group",
                "split family",
            ),
            (
                "a{x=\"1\"} 1\na{x=\"1\"} 2\n",
                "line 2: the same series",
                "duplicated series",
            ),
            ("# TYPE c counter\nc -1\n", "negative", "negative counter"),
            (
                "# TYPE h histogram\nh 1\n",
                "only _bucket, _sum, _count",
                "histogram base sample",
            ),
            (
                "# TYPE h histogram\nh_bucket 1\n",
                "without `le`",
                "bucket without le",
            ),
            (
                "# TYPE h histogram\nh_bucket{le=\"x\"} 1\n",
                "label le",
                "bad le",
            ),
            (
                "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n",
                "no bucket le=\"+Inf\"",
                "no +Inf bucket",
            ),
            (
                "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",
                "cumulative",
                "decreasing buckets",
            ),
            (
                "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 3\n",
                "counts 2 but `h_count` is 3",
                "+Inf differs from count",
            ),
            (
                "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\n",
                "no `h_count`",
                "no count",
            ),
            (
                "# TYPE s summary\ns 1\n",
                "without `quantile`",
                "summary sample without quantile",
            ),
            (
                "# TYPE s summary\ns{quantile=\"2\"} 1\n",
                "not within 0..1",
                "quantile out of range",
            ),
        ];
        for (text, expected, what) in cases {
            match parse(text) {
                Ok(samples) => panic!("{what}: accepted {text:?} as {samples:?}"),
                Err(e) => assert!(e.contains(expected), "{what}: {e:?} lacks {expected:?}"),
            }
        }
    }

    #[test]
    fn values_read_as_floats() {
        for (token, expected) in [
            ("0", 0.0),
            ("-0.5", -0.5),
            ("+3", 3.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("1e3", 1000.0),
            ("1.5E-3", 0.0015),
            ("-Inf", f64::NEG_INFINITY),
            ("+Inf", f64::INFINITY),
        ] {
            assert_eq!(parse_value(token), Ok(expected), "{token}");
        }
        for bad in [
            "", ".", "e3", "1e", "1.2.3", "--1", "infinity", "nan", "1_000",
        ] {
            assert!(parse_value(bad).is_err(), "{bad} accepted");
        }
    }
}
