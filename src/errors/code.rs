//! The kinds of error polycodec raises, as data: each error carries its [`Code`] from where it
//! is raised, and the code's public string (`exc.code`, the `type` of an `errors()` entry) is
//! written once, in the table below. Users match on these strings: rewording a message never
//! changes one, and a string changes only with this table and the Errors page's.

/// Declares [`Code`], its one table of strings and the list of every code.
macro_rules! codes {
    ($($(#[doc = $doc:literal])* $variant:ident => $text:literal,)+) => {
        /// The stable code of an error (the strings follow pydantic's where they mean the same).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Code {
            $($(#[doc = $doc])* $variant,)+
        }

        impl Code {
            /// Every code, in the table's order.
            #[cfg(test)]
            pub const ALL: &'static [Code] = &[$(Code::$variant,)+];

            /// The code's public string.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)+
                }
            }
        }
    };
}

codes! {
    // A value of the wrong type.
    IntType => "int_type",
    FloatType => "float_type",
    StringType => "string_type",
    BoolType => "bool_type",
    NoneRequired => "none_required",
    BytesType => "bytes_type",
    DecimalType => "decimal_type",
    DatetimeType => "datetime_type",
    DateType => "date_type",
    TimeType => "time_type",
    TimeDeltaType => "time_delta_type",
    UuidType => "uuid_type",
    /// Also an array-like record's, a tuple's and `decode_many`'s input.
    ListType => "list_type",
    /// Also a record's (an object).
    DictType => "dict_type",
    UnionType => "union_type",
    Enum => "enum",
    LiteralError => "literal_error",
    Missing => "missing",
    ExtraForbidden => "extra_forbidden",
    UnionTagInvalid => "union_tag_invalid",
    UnionTagNotFound => "union_tag_not_found",
    // Failed bounds.
    GreaterThan => "greater_than",
    GreaterThanEqual => "greater_than_equal",
    LessThan => "less_than",
    LessThanEqual => "less_than_equal",
    MultipleOf => "multiple_of",
    StringTooShort => "string_too_short",
    StringTooLong => "string_too_long",
    BytesTooShort => "bytes_too_short",
    BytesTooLong => "bytes_too_long",
    TooShort => "too_short",
    TooLong => "too_long",
    StringPatternMismatch => "string_pattern_mismatch",
    DecimalMaxDigits => "decimal_max_digits",
    DecimalMaxPlaces => "decimal_max_places",
    TimezoneAware => "timezone_aware",
    TimezoneNaive => "timezone_naive",
    // Text that is no such value.
    DatetimeParsing => "datetime_parsing",
    DateParsing => "date_parsing",
    TimeParsing => "time_parsing",
    TimeDeltaParsing => "time_delta_parsing",
    UuidParsing => "uuid_parsing",
    DecimalParsing => "decimal_parsing",
    BytesInvalidEncoding => "bytes_invalid_encoding",
    IntParsing => "int_parsing",
    /// An integer beyond `sys.get_int_max_str_digits()` (CPython's own ValueError).
    IntParsingSize => "int_parsing_size",
    FiniteNumber => "finite_number",
    DatetimeRange => "datetime_range",
    DateRange => "date_range",
    TimeRange => "time_range",
    TimeDeltaRange => "time_delta_range",
    DictKeyType => "dict_key_type",
    /// A pickled standard-library value whose state is not what the type pickles.
    PickleValue => "pickle_value",
    /// User code's TypeError, ValueError or AttributeError, and what no other code names.
    ValueError => "value_error",
    // Malformed input (DecodeError).
    JsonInvalid => "json_invalid",
    MsgpackInvalid => "msgpack_invalid",
    PickleInvalid => "pickle_invalid",
    AvroInvalid => "avro_invalid",
    /// Nested deeper than the decoders go.
    RecursionLoop => "recursion_loop",
    DecodeError => "decode_error",
    /// Every EncodeError (which has no `code` attribute of its own; kept for completeness).
    EncodeError => "encode_error",
}

impl Code {
    /// The code of text the byte layer could not read as what it names.
    pub fn of_text(error: polycodec_formats::text::temporal::TextError) -> Code {
        use polycodec_formats::text::temporal::TextError;
        match error {
            TextError::MalformedDatetime
            | TextError::DatetimeField(_)
            | TextError::DatetimeOverflow => Code::DatetimeParsing,
            TextError::MalformedDate | TextError::DateField(_) => Code::DateParsing,
            TextError::MalformedTime | TextError::TimeField(_) => Code::TimeParsing,
            TextError::MalformedDuration | TextError::DurationUnit | TextError::DurationRange => {
                Code::TimeDeltaParsing
            }
            TextError::InvalidUuid => Code::UuidParsing,
            TextError::InvalidBase64 => Code::BytesInvalidEncoding,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Code;

    /// Every code's public string, written out: users match on them, so a change to the table
    /// above fails here until it is made on purpose (and in docs/errors.md).
    const PINNED: &[(Code, &str)] = &[
        (Code::IntType, "int_type"),
        (Code::FloatType, "float_type"),
        (Code::StringType, "string_type"),
        (Code::BoolType, "bool_type"),
        (Code::NoneRequired, "none_required"),
        (Code::BytesType, "bytes_type"),
        (Code::DecimalType, "decimal_type"),
        (Code::DatetimeType, "datetime_type"),
        (Code::DateType, "date_type"),
        (Code::TimeType, "time_type"),
        (Code::TimeDeltaType, "time_delta_type"),
        (Code::UuidType, "uuid_type"),
        (Code::ListType, "list_type"),
        (Code::DictType, "dict_type"),
        (Code::UnionType, "union_type"),
        (Code::Enum, "enum"),
        (Code::LiteralError, "literal_error"),
        (Code::Missing, "missing"),
        (Code::ExtraForbidden, "extra_forbidden"),
        (Code::UnionTagInvalid, "union_tag_invalid"),
        (Code::UnionTagNotFound, "union_tag_not_found"),
        (Code::GreaterThan, "greater_than"),
        (Code::GreaterThanEqual, "greater_than_equal"),
        (Code::LessThan, "less_than"),
        (Code::LessThanEqual, "less_than_equal"),
        (Code::MultipleOf, "multiple_of"),
        (Code::StringTooShort, "string_too_short"),
        (Code::StringTooLong, "string_too_long"),
        (Code::BytesTooShort, "bytes_too_short"),
        (Code::BytesTooLong, "bytes_too_long"),
        (Code::TooShort, "too_short"),
        (Code::TooLong, "too_long"),
        (Code::StringPatternMismatch, "string_pattern_mismatch"),
        (Code::DecimalMaxDigits, "decimal_max_digits"),
        (Code::DecimalMaxPlaces, "decimal_max_places"),
        (Code::TimezoneAware, "timezone_aware"),
        (Code::TimezoneNaive, "timezone_naive"),
        (Code::DatetimeParsing, "datetime_parsing"),
        (Code::DateParsing, "date_parsing"),
        (Code::TimeParsing, "time_parsing"),
        (Code::TimeDeltaParsing, "time_delta_parsing"),
        (Code::UuidParsing, "uuid_parsing"),
        (Code::DecimalParsing, "decimal_parsing"),
        (Code::BytesInvalidEncoding, "bytes_invalid_encoding"),
        (Code::IntParsing, "int_parsing"),
        (Code::IntParsingSize, "int_parsing_size"),
        (Code::FiniteNumber, "finite_number"),
        (Code::DatetimeRange, "datetime_range"),
        (Code::DateRange, "date_range"),
        (Code::TimeRange, "time_range"),
        (Code::TimeDeltaRange, "time_delta_range"),
        (Code::DictKeyType, "dict_key_type"),
        (Code::PickleValue, "pickle_value"),
        (Code::ValueError, "value_error"),
        (Code::JsonInvalid, "json_invalid"),
        (Code::MsgpackInvalid, "msgpack_invalid"),
        (Code::PickleInvalid, "pickle_invalid"),
        (Code::AvroInvalid, "avro_invalid"),
        (Code::RecursionLoop, "recursion_loop"),
        (Code::DecodeError, "decode_error"),
        (Code::EncodeError, "encode_error"),
    ];

    #[test]
    fn every_code_string_is_pinned() {
        assert_eq!(
            PINNED.len(),
            Code::ALL.len(),
            "a code without its pinned string"
        );
        for (code, text) in PINNED {
            assert_eq!(code.as_str(), *text, "{code:?}");
        }
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            assert!(
                seen.insert(code.as_str()),
                "{code:?}'s string is used twice"
            );
        }
    }

    /// The codes the Errors page's table lists: the backquoted words of its first column.
    fn documented() -> std::collections::BTreeSet<&'static str> {
        let page = include_str!("../../docs/errors.md");
        let table = page
            .split_once("| Code | Raised for |")
            .expect("docs/errors.md has the codes table")
            .1;
        table
            .lines()
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .flat_map(|line| {
                line.split('|')
                    .nth(1)
                    .unwrap_or("")
                    .split('`')
                    .skip(1)
                    .step_by(2)
            })
            .collect()
    }

    #[test]
    fn the_documented_codes_are_the_codes() {
        let documented = documented();
        // An EncodeError has no code users see (only DecodeErrors have `code` and `errors()`).
        let raised: std::collections::BTreeSet<&str> = Code::ALL
            .iter()
            .filter(|code| **code != Code::EncodeError)
            .map(|code| code.as_str())
            .collect();
        assert_eq!(documented, raised);
    }
}
