use super::*;

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
