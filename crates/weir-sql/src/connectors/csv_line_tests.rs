use super::*;
use proptest::prelude::*;

/// The same variants and, for doubles, the same bits.
fn same_values(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Value::Double(p), Value::Double(q)) => p.to_bits() == q.to_bits(),
            _ => std::mem::discriminant(x) == std::mem::discriminant(y) && x == y,
        })
}

/// Parses every line with one parser (so its day cache carries over) and with the
/// general parser, each into a vector already holding a value, and compares.
fn assert_like_general(types: &[DataType], lines: &[String]) {
    let mut parser = CsvLineParser::new(types);
    for line in lines {
        let mut fast = vec![Value::Int(-1)];
        let mut general = vec![Value::Int(-1)];
        let fast_result = parser.parse_into(line, &mut fast);
        let general_result = parse_csv_into(line, types, &mut general);
        assert_eq!(fast_result, general_result, "{line:?}");
        assert!(same_values(&fast, &general), "{line:?}: {fast:?} vs {general:?}");
    }
}

fn orders_types() -> Vec<DataType> {
    vec![
        DataType::BigInt,
        DataType::Int,
        DataType::Double,
        DataType::Timestamp(3),
    ]
}

#[test]
fn order_lines_parse_as_the_general_parser_parses_them() {
    let mut lines = Vec::new();
    for i in 0..20_000i64 {
        let ms = 1_699_999_000_000 + i * 7_919_311;
        let t = chrono::DateTime::from_timestamp_millis(ms)
            .expect("in range")
            .naive_utc();
        lines.push(format!(
            "{i},{},{}.{:02},{}",
            i % 6000,
            i % 1000,
            i % 100,
            t.format("%Y-%m-%d %H:%M:%S%.3f")
        ));
        lines.push(format!(
            "-{i},-{},0.{:03},{}",
            i % 7,
            i % 1000,
            t.format("%Y-%m-%d %H:%M:%S")
        ));
    }
    assert_like_general(&orders_types(), &lines);
}

#[test]
fn unusual_fields_and_lines_parse_as_the_general_parser_parses_them() {
    let lines: Vec<String> = [
        "1,2,3.5,2023-11-14 22:13:20.010",
        "1,2,3.5,2023-11-14 22:13:20.1",
        "1,2,3.5,2023-11-14 22:13:20.123456789",
        "1,2,3.5,2023-11-14 22:13:20.1234567891",
        "1,2,3.5,2023-11-14 22:13:20.99999999999999999999999",
        "1,2,3.5,2023-11-14 22:13:20.",
        "1,2,3.5,2023-11-14 22:13",
        "1,2,3.5,2023-11-14T22:13:20",
        "1,2,3.5, 2023-11-14 22:13:20",
        "1,2,3.5,2023-11-14 24:00:00",
        "1,2,3.5,2023-02-29 10:00:00",
        "1,2,3.5,2024-02-29 10:00:00",
        "1,2,3.5,2024-02-30 10:00:00",
        "1,2,3.5,2023-13-01 10:00:00",
        "1,2,3.5,0000-01-01 00:00:00",
        "1,2,3.5,1969-12-31 23:59:59.999",
        "1,2,3.5,2023-11-14 22:13:60",
        "1,2,3.5,2023-11-14 2a:13:20",
        "1,2,3.5,2023-11-14",
        "1,2,3.5,",
        ",,,",
        "1,2,3.5",
        "1,2,3.5,2023-11-14 22:13:20,9",
        "1,2,3.5,2023-11-14 22:13:20x",
        "\"1\",2,3.5,2023-11-14 22:13:20",
        "1,2,\"3.5\",2023-11-14 22:13:20",
        " 1,2 ,3.5,2023-11-14 22:13:20",
        "1234567890123456789,2,3.5,2023-11-14 22:13:20",
        "123456789012345678,2,3.5,2023-11-14 22:13:20",
        "9999999999999999999,2,3.5,2023-11-14 22:13:20",
        "-9223372036854775808,2,3.5,2023-11-14 22:13:20",
        "-,2,3.5,2023-11-14 22:13:20",
        "+5,2,3.5,2023-11-14 22:13:20",
        "1,4294967297,3.5,2023-11-14 22:13:20",
        "1,x,3.5,2023-11-14 22:13:20",
        "1,2,1.,2023-11-14 22:13:20",
        "1,2,.5,2023-11-14 22:13:20",
        "1,2,-0,2023-11-14 22:13:20",
        "1,2,1e3,2023-11-14 22:13:20",
        "1,2,1234567890123456,2023-11-14 22:13:20",
        "1,2,123456789012345,2023-11-14 22:13:20",
        "1,2,1234567890.12345,2023-11-14 22:13:20",
        "1,2,1234567890.123456,2023-11-14 22:13:20",
        "1,2,NaN,2023-11-14 22:13:20",
        "1,2,1.2.3,2023-11-14 22:13:20",
        "1,2,3.5,2023-11-14 22:13:20,",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_like_general(&orders_types(), &lines);
}

#[test]
fn narrow_integers_strings_and_decimals_parse_as_the_general_parser_parses_them() {
    let types = [
        DataType::TinyInt,
        DataType::SmallInt,
        DataType::STRING,
        DataType::Decimal(10, 2),
        DataType::Float,
        DataType::TimestampLtz(3),
    ];
    let lines: Vec<String> = [
        "1,2,a,1.5,0.5,2023-11-14 22:13:20",
        "300,70000,,1.25,1.5,2023-11-14 22:13:20.5",
        "-129,-32769,x y,-7,3,2023-11-15 00:00:00",
        "1,2,a,b,0.5,2023-11-14 22:13:20",
        "\"1\",2,\"a,\"\"b\",1,2,2023-11-14 22:13:20",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_like_general(&types, &lines);
    assert_like_general(&[], &["".to_string(), "1".to_string()]);
}

#[test]
fn a_day_cache_never_carries_a_date_to_a_line_of_another_date() {
    let types = [DataType::Timestamp(3)];
    let mut parser = CsvLineParser::new(&types);
    let mut days = Vec::new();
    for line in [
        "2023-11-14 23:59:59.999",
        "2023-11-15 00:00:00.000",
        "2023-11-14 00:00:00.001",
        "2023-11-14 00:00:00.001",
    ] {
        let mut out = Vec::new();
        parser.parse_into(line, &mut out).unwrap();
        days.push(out);
    }
    let expected = [
        1_700_006_399_999i64,
        1_700_006_400_000,
        1_699_920_000_001,
        1_699_920_000_001,
    ];
    let got: Vec<Vec<Value>> = expected.iter().map(|ms| vec![Value::Timestamp(*ms)]).collect();
    assert_eq!(days, got);
}

proptest::proptest! {
    /// Numbers of every length around the fast readers' limits (and a timestamp):
    /// whatever the fast readers accept or decline, the values and errors are the
    /// general parser's.
    #[test]
    fn numbers_of_any_length_parse_as_the_general_parser_parses_them(
        id in "-?[0-9]{0,20}",
        user in "-?[0-9]{0,11}",
        amount in "-?[0-9]{0,17}(\\.[0-9]{0,17})?",
        ts in "2023-11-14 22:13:20(\\.[0-9]{0,25})?",
    ) {
        assert_like_general(&orders_types(), &[format!("{id},{user},{amount},{ts}")]);
    }

    /// Lines of digits, signs, dots, colons and commas in any arrangement.
    #[test]
    fn any_arrangement_of_number_characters_parses_as_the_general_parser_parses_it(
        line in "[-0-9.,: ]{0,60}",
    ) {
        assert_like_general(&orders_types(), &[line]);
    }
}

/// Every column type a CSV table can have.
const ALL_TYPES: [DataType; 14] = [
    DataType::TinyInt,
    DataType::SmallInt,
    DataType::Int,
    DataType::BigInt,
    DataType::Float,
    DataType::Double,
    DataType::Decimal(10, 2),
    DataType::STRING,
    DataType::Char(3),
    DataType::Boolean,
    DataType::Date,
    DataType::Time,
    DataType::Timestamp(3),
    DataType::TimestampLtz(3),
];

/// Field texts that reach the edges of every type's reading: integer limits and one
/// past them, signs, spaces, exponents, NaN and infinities, negative zero, long
/// decimals, dates and times in and out of range, NULL literals, empty text, unicode.
fn field_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "", "0", "-0", "1", "-1", "007", "+5", " 5", "5 ", "127", "128", "-129", "32768", "2147483647",
            "2147483648", "-2147483649", "4294967297", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "123456789012345678", "1234567890123456789",
            "0.1", "-0.0", "0.07", "3.5", "1.", ".5", "1e3", "1E-3", "-2.5e+10", "NaN", "Infinity", "-Infinity",
            "inf", "123456789012345", "1234567890123456", "1234567890.12345", "1234567890.123456",
            "0.1000000000000000055511151231257827", "9007199254740993", "1.7976931348623157e308", "1e309",
            "12345678.125", "99999999.995", "-7", "1.2.3", "--1", "-", "true", "FALSE", "yes", "null", "NULL",
            "2023-11-14", "2024-02-29", "2023-02-29", "0000-01-01", "9999-12-31", "2023-13-01",
            "22:13:20", "24:00:00", "23:59:59.999", "2023-11-14 22:13:20", "2023-11-14 22:13:20.5",
            "2023-11-14 22:13:20.123456789", "2023-11-14 22:13:20.1234567891", "2023-11-14T22:13:20",
            "1969-12-31 23:59:59.999", "2023-11-14 22:13:60", "2023-11-14 22:13:20.", "x", "héllo", "日本",
            "a b", "🙂",
        ])
        .prop_map(str::to_owned),
        2 => "-?[0-9]{1,20}(\\.[0-9]{0,20})?",
        1 => any::<i64>().prop_map(|i| i.to_string()),
        1 => any::<f64>().prop_map(|d| d.to_string()),
        1 => "[a-z,\" 0-9é]{0,6}",
    ]
}

/// A field as it appears on the line: plain (only if that keeps it one field), or
/// quoted with its quotes doubled.
fn field_on_line(text: &str, quote: bool) -> String {
    if quote || text.contains([',', '"']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// How a generated line is spoiled, if it is.
#[derive(Debug, Clone)]
enum Damage {
    None,
    /// A field is missing.
    DropField,
    /// There is a field too many.
    ExtraField,
    /// A quote opens and never closes.
    UnclosedQuote,
    /// A quote in the middle of a plain field.
    QuoteInField,
    /// Text after a quoted field's closing quote.
    TextAfterQuote,
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        12 => Just(Damage::None),
        1 => Just(Damage::DropField),
        1 => Just(Damage::ExtraField),
        1 => Just(Damage::UnclosedQuote),
        1 => Just(Damage::QuoteInField),
        1 => Just(Damage::TextAfterQuote),
    ]
}

/// A CSV line of `types.len()` generated fields, perhaps damaged.
fn csv_line(types: usize) -> impl Strategy<Value = String> {
    (
        prop::collection::vec((field_text(), prop::bool::weighted(0.2)), types),
        damage(),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(fields, damage, at)| {
            let mut fields: Vec<String> = fields.iter().map(|(t, q)| field_on_line(t, *q)).collect();
            let i = at.index(fields.len().max(1));
            match damage {
                Damage::None => {}
                Damage::DropField => {
                    if !fields.is_empty() {
                        fields.remove(i);
                    }
                }
                Damage::ExtraField => fields.insert(i.min(fields.len()), "7".into()),
                Damage::UnclosedQuote => fields.insert(i.min(fields.len()), "\"1,2".into()),
                Damage::QuoteInField => fields.insert(i.min(fields.len()), "1\"2".into()),
                Damage::TextAfterQuote => fields.insert(i.min(fields.len()), "\"1\"2".into()),
            }
            fields.join(",")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    /// Lines of any column types, with quoted fields, doubled quotes, empty fields,
    /// NULL literals, unicode, values at and past every type's limits, and lines with
    /// a field missing or too many or broken quoting: the fast parser (its day cache
    /// carried from line to line) gives exactly the general parser's values and error
    /// text, and leaves the vector as the general parser leaves it.
    #[test]
    fn csv_line_parser_gives_exactly_what_the_general_parser_gives(
        (types, lines) in prop::collection::vec(prop::sample::select(ALL_TYPES.to_vec()), 0..7)
            .prop_flat_map(|types| {
                let n = types.len();
                (Just(types), prop::collection::vec(csv_line(n), 1..6))
            }),
    ) {
        assert_like_general(&types, &lines);
    }
}
