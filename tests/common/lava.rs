//! LAVA's dispatcher's view of a signal line (its pattern and the checks it makes), for
//! tests/plain/lava.rs (tier 1) and tests/host/lava.rs (tier 2).

use regex::Regex;
use std::collections::BTreeMap;

/// The dispatcher's pattern, verbatim.
pub const SIGNAL_PATTERN: &str = r"<LAVA_SIGNAL_(\S+) ([^>]+)>";

/// A TESTCASE line as LAVA's dispatcher would take it: its parameters by lower-case key,
/// or why the dispatcher would drop it.
pub fn lava_accepts(line: &str) -> Result<BTreeMap<String, String>, String> {
    let re = Regex::new(SIGNAL_PATTERN).unwrap();
    let m = re.captures(line).ok_or("no LAVA signal in the line")?;
    if m.get(0).unwrap().as_str() != line {
        return Err("the signal is not the whole line".into());
    }
    if &m[1] != "TESTCASE" {
        return Err(format!("signal {} is not TESTCASE", &m[1]));
    }
    let mut data = BTreeMap::new();
    for param in m[2].split_whitespace() {
        // LAVA: `parts = param.split("=")`, `if len(parts) == 2`: one `=`, no more.
        let parts: Vec<&str> = param.split('=').collect();
        let [key, value] = parts[..] else {
            return Err(format!("malformed parameter {param:?}"));
        };
        data.insert(key.to_lowercase(), value.to_string());
    }
    if !data.contains_key("test_case_id") {
        return Err("no test_case_id".into());
    }
    match data.get("result").map(String::as_str) {
        Some("pass" | "fail" | "skip" | "unknown") => {}
        other => return Err(format!("bad result {other:?}")),
    }
    if let Some(m) = data.get("measurement") {
        // Python float() syntax for what mmcab prints: optional sign, digits, one dot.
        let plain = Regex::new(r"^-?[0-9]+(\.[0-9]+)?$").unwrap();
        if !plain.is_match(m) || m.parse::<f64>().is_err() {
            return Err(format!("measurement {m:?} is not a plain decimal"));
        }
    }
    Ok(data)
}
