//! The apache-avro crate as the oracle of the schema layer: over the Avro project's schemas
//! (tests/data/avro) and generated ones, the crate and [`Schema::parse`] accept the same
//! schemas, and give the same Parsing Canonical Form and fingerprint.
//!
//! The crate's own canonical form keeps what the specification strips (a field's `order`, a
//! decimal's `precision` and `scale`, a primitive with a logical type as `{"type":"long"}`),
//! so its form is taken of its parsed schema reduced to what the form keeps. The cases where
//! the crate and the specification disagree on validity are pinned in
//! `tests/test_avro_schema.py` (a name defined twice, `"type": "error"`) and left out of the
//! generated schemas.

use std::path::{Path, PathBuf};

use apache_avro::schema::{InnerDecimalSchema, UnionSchema, UuidSchema};
use apache_avro::Schema as Crate;
use proptest::prelude::*;

use super::schema::{rabin, Schema, Sharing};

/// Drops from the crate's parsed schema what the canonical form strips.
fn reduce(schema: &mut Crate) {
    let base = match schema {
        Crate::Record(record) => {
            record.attributes.clear();
            for field in &mut record.fields {
                field.custom_attributes.clear();
                reduce(&mut field.schema);
            }
            return;
        }
        Crate::Enum(inner) => {
            inner.attributes.clear();
            return;
        }
        Crate::Fixed(inner) => {
            inner.attributes.clear();
            return;
        }
        Crate::Array(array) => {
            array.attributes.clear();
            reduce(&mut array.items);
            return;
        }
        Crate::Map(map) => {
            map.attributes.clear();
            reduce(&mut map.types);
            return;
        }
        Crate::Union(union) => {
            let mut variants = union.variants().to_vec();
            variants.iter_mut().for_each(reduce);
            if let Ok(reduced) = UnionSchema::new(variants) {
                *union = reduced;
            }
            return;
        }
        Crate::Date | Crate::TimeMillis => Crate::Int,
        Crate::TimeMicros
        | Crate::TimestampMillis
        | Crate::TimestampMicros
        | Crate::TimestampNanos
        | Crate::LocalTimestampMillis
        | Crate::LocalTimestampMicros
        | Crate::LocalTimestampNanos => Crate::Long,
        Crate::BigDecimal | Crate::Uuid(UuidSchema::Bytes) => Crate::Bytes,
        Crate::Uuid(UuidSchema::String) => Crate::String,
        Crate::Uuid(UuidSchema::Fixed(fixed)) | Crate::Duration(fixed) => {
            Crate::Fixed(fixed.clone())
        }
        Crate::Decimal(decimal) => match &decimal.inner {
            InnerDecimalSchema::Bytes => Crate::Bytes,
            InnerDecimalSchema::Fixed(fixed) => Crate::Fixed(fixed.clone()),
        },
        _ => return,
    };
    *schema = base;
    reduce(schema);
}

/// The crate's verdict on `text`: its (reduced) canonical form, or `None` when it refuses it.
fn crate_canonical(text: &str) -> Option<String> {
    let mut parsed = std::panic::catch_unwind(|| Crate::parse_str(text))
        .ok()?
        .ok()?;
    reduce(&mut parsed);
    Some(parsed.canonical_form())
}

fn ours(text: &str) -> Option<String> {
    let found = Schema::parse(text.as_bytes(), Sharing::None)
        .ok()
        .map(|s| s.canonical_form());
    // Writer schemas share equal unions; their canonical form is the same.
    let shared = Schema::parse(text.as_bytes(), Sharing::Unions)
        .ok()
        .map(|s| s.canonical_form());
    assert_eq!(found, shared, "schema: {text}");
    found
}

fn agree(text: &str) {
    let expected = crate_canonical(text);
    let found = ours(text);
    assert_eq!(found, expected, "schema: {text}");
    if let Some(form) = found {
        let parsed = Schema::parse(text.as_bytes(), Sharing::None).unwrap();
        assert_eq!(parsed.fingerprint(), rabin(form.as_bytes()));
    }
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/avro")
}

fn files(folder: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(data().join(folder))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    out.sort();
    out
}

#[test]
fn the_avro_projects_schemas() {
    let mut checked = 0;
    for folder in [
        "lang/c/tests/schema_tests/pass",
        "lang/c/tests/schema_tests/fail",
        "lang/c++/jsonschemas",
    ] {
        for path in files(folder) {
            let text = std::fs::read_to_string(&path).unwrap();
            if serde_json::from_str::<serde_json::Value>(&text).is_err() {
                // Not JSON (the C++ parser's lenient extension): both refuse it.
                assert!(ours(&text).is_none(), "{}", path.display());
                continue;
            }
            agree(&text);
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked}");
}

#[test]
fn the_canonical_form_vectors() {
    let text = std::fs::read_to_string(data().join("share/test/data/schema-tests.txt")).unwrap();
    let mut inputs = 0;
    for case in text.split("\n// ").skip(1) {
        let Some(start) = case.find("<<INPUT") else {
            continue;
        };
        let rest = &case[start + "<<INPUT".len()..];
        let input = match rest.strip_prefix('\n') {
            Some(body) => &body[..body.find("\nINPUT").unwrap()],
            None => rest.lines().next().unwrap().trim(),
        };
        agree(input);
        inputs += 1;
    }
    assert_eq!(inputs, 34);
}

/// A generated schema: its JSON text, built from names that cannot clash.
fn schema_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("\"null\"".to_string()),
        Just("\"boolean\"".to_string()),
        Just("\"int\"".to_string()),
        Just("\"long\"".to_string()),
        Just("\"float\"".to_string()),
        Just("\"double\"".to_string()),
        Just("\"bytes\"".to_string()),
        Just("\"string\"".to_string()),
        Just(r#"{"type":"long","logicalType":"timestamp-millis"}"#.to_string()),
        Just(r#"{"type":"int","logicalType":"date"}"#.to_string()),
        Just(r#"{"type":"string","logicalType":"uuid"}"#.to_string()),
        Just(r#"{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}"#.to_string()),
        (0usize..20).prop_map(|size| format!(r#"{{"type":"fixed","name":"F","size":{size}}}"#)),
        Just(r#"{"type":"enum","name":"E","symbols":["A","B"],"default":"B"}"#.to_string()),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner
                .clone()
                .prop_map(|items| format!(r#"{{"type":"array","items":{items}}}"#)),
            inner
                .clone()
                .prop_map(|values| format!(r#"{{"values":{values},"type":"map","extra":[1]}}"#)),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|fields| {
                let fields: Vec<String> = fields
                    .iter()
                    .enumerate()
                    .map(|(i, t)| format!(r#"{{"name":"f{i}","type":{t},"order":"descending"}}"#))
                    .collect();
                format!(
                    r#"{{"type":"record","name":"R","namespace":"n","fields":[{}]}}"#,
                    fields.join(",")
                )
            }),
            prop::collection::vec(inner, 1..3).prop_map(|branches| {
                let mut all = vec!["\"null\"".to_string()];
                all.extend(branches);
                format!("[{}]", all.join(","))
            }),
        ]
    })
}

/// Gives every named type of `text` its own name (`R0`, `E1`, ...), so no name is defined
/// twice, and makes the last record refer back to the first by name when there is one.
fn unique_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut count = 0;
    let mut rest = text;
    while let Some(at) = rest.find(r#""name":""#) {
        let start = at + r#""name":""#.len();
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let end = after.find('"').unwrap();
        let name = &after[..end];
        if name.starts_with('f') {
            out.push_str(name); // a field name
        } else {
            out.push_str(&format!("{name}{count}"));
            count += 1;
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn generated_schemas(text in schema_text()) {
        agree(&unique_names(&text));
    }
}
