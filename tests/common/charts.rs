//! Checks that a chart PNG is a real chart, shared by the test files that render
//! reports.
//!
//! ```ignore
//! use crate::common::charts;
//! ```

use std::path::Path;

/// Decode a PNG and check it is a real chart: big enough, mostly white, with ink in
/// several colours (bars/lines) and dark text.
pub fn check_png(path: &Path) {
    let img = image::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgb8();
    let (w, h) = img.dimensions();
    assert!(w >= 600 && h >= 400, "{}: {w}x{h}", path.display());
    let total = (w * h) as usize;
    let ink = img.pixels().filter(|p| p.0 != [255, 255, 255]).count();
    let dark = img.pixels().filter(|p| p.0.iter().all(|c| *c < 80)).count();
    let mut colours: Vec<[u8; 3]> = img
        .pixels()
        .filter(|p| {
            let [r, g, b] = p.0;
            r.max(g).max(b) - r.min(g).min(b) > 60
        })
        .map(|p| p.0)
        .collect();
    colours.sort();
    colours.dedup();
    assert!(
        ink * 100 > total,
        "{}: almost blank ({ink} of {total})",
        path.display()
    );
    assert!(ink * 100 < total * 90, "{}: almost all ink", path.display());
    assert!(
        dark > 500,
        "{}: no text or axes ({dark} dark px)",
        path.display()
    );
    assert!(colours.len() >= 2, "{}: no coloured data", path.display());
}
