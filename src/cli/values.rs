//! The domain's enums as command-line values (clap's `ValueEnum`), implemented here so
//! that the domain modules do not depend on clap. Names and aliases are the domain's
//! own (the same words as in plan files, CSV and JSON).

use crate::plan::knob::KnobKind;
use crate::plan::matrix::Order;
use crate::plan::workload::Engine;
use crate::stats::multiple::Correction;
use crate::workload::result::Direction;
use clap::builder::PossibleValue;
use clap::ValueEnum;

impl ValueEnum for Order {
    fn value_variants<'a>() -> &'a [Self] {
        &Order::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(
            PossibleValue::new(self.as_str())
                .aliases(self.aliases().iter().copied())
                .help(self.help()),
        )
    }
}

impl ValueEnum for Direction {
    fn value_variants<'a>() -> &'a [Self] {
        &[Direction::Read, Direction::Write]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

impl ValueEnum for Engine {
    fn value_variants<'a>() -> &'a [Self] {
        &[Engine::Sync, Engine::IoUring, Engine::Ioctl]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let value = PossibleValue::new(self.as_str());
        Some(match self {
            // fio's name for the same engine, as plan files accept it.
            Engine::Sync => value.alias("psync"),
            Engine::IoUring | Engine::Ioctl | Engine::MmcTest => value,
        })
    }
}

impl ValueEnum for Correction {
    fn value_variants<'a>() -> &'a [Self] {
        &Correction::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let value =
            PossibleValue::new(self.key()).help(format!("{}: {}", self.as_str(), self.controls()));
        Some(match self {
            // statsmodels' names for the same methods.
            Correction::BenjaminiHochberg => value.aliases(["fdr_bh", "benjamini-hochberg"]),
            Correction::Holm => value,
        })
    }
}

impl ValueEnum for KnobKind {
    fn value_variants<'a>() -> &'a [Self] {
        &KnobKind::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()).help(self.help()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_match_the_domain() {
        for order in Order::ALL {
            assert_eq!(
                <Order as ValueEnum>::from_str(order.as_str(), false),
                Ok(order)
            );
        }
        assert_eq!(
            <Order as ValueEnum>::from_str("ABAB", true),
            Ok(Order::Interleaved)
        );
        assert_eq!(
            <Order as ValueEnum>::from_str("aabb", false),
            Ok(Order::Blocked)
        );
        assert!(<Order as ValueEnum>::from_str("sideways", true).is_err());
        for d in Direction::value_variants() {
            let json = serde_json::to_string(d).unwrap();
            assert_eq!(json, format!("\"{}\"", d.as_str()));
            assert_eq!(
                <Direction as ValueEnum>::from_str(d.as_str(), false),
                Ok(*d)
            );
        }
        for e in Engine::value_variants() {
            let json = serde_json::to_string(e).unwrap();
            assert_eq!(json, format!("\"{}\"", e.as_str()));
        }
        assert_eq!(
            <Engine as ValueEnum>::from_str("psync", false),
            Ok(Engine::Sync)
        );
        for c in Correction::ALL {
            assert_eq!(<Correction as ValueEnum>::from_str(c.key(), false), Ok(c));
        }
        assert_eq!(
            <Correction as ValueEnum>::from_str("fdr_bh", false),
            Ok(Correction::BenjaminiHochberg)
        );
        // A knob kind has one spelling in plans and on the command line.
        for kind in KnobKind::ALL {
            assert_eq!(
                <KnobKind as ValueEnum>::from_str(kind.as_str(), false),
                Ok(kind)
            );
        }
    }
}
