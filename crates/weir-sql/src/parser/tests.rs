use super::*;

#[test]
fn a_syntax_error_names_the_token_line_and_column() {
    let err = parse_statement("SELECT a\nFROM t WHERE").unwrap_err().to_string();
    assert!(err.starts_with("SQL parse failed. Encountered \"EOF\""), "{err}");
    let err = parse_statement("SELECT a FORM t").unwrap_err().to_string();
    assert!(
        err.starts_with("SQL parse failed. Encountered \"t\" at line 1, column 15."),
        "{err}"
    );
}

#[test]
fn create_table_with_computed_column_watermark_key_and_options_parses() {
    let sql = "CREATE TEMPORARY TABLE orders (order_id BIGINT, user_id BIGINT NOT NULL, amount DECIMAL(10, 2), \
               ts_millis BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_millis, 3), \
               WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (order_id) NOT ENFORCED) \
               WITH ('connector' = 'filesystem', 'path' = '/tmp/o.csv', 'format' = 'csv')";
    let Statement::CreateTable(def) = parse_statement(sql).unwrap() else {
        panic!("not a CREATE TABLE")
    };
    assert!(def.temporary);
    assert_eq!(def.columns.len(), 5);
    assert!(matches!(def.columns[4].kind, ddl::ColumnKind::Computed(_)));
    assert_eq!(def.watermark.as_ref().unwrap().column, "ts");
    assert_eq!(def.primary_key, vec!["order_id".to_string()]);
    assert_eq!(def.options["format"], "csv");
}

#[test]
fn window_tvf_set_reset_and_statement_sets_parse() {
    let q = parse_statement(
        "SELECT window_start FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start",
    )
    .unwrap();
    assert!(matches!(q, Statement::Query(_)));
    assert!(
        matches!(parse_statement("SET 'parallelism.default' = '2'").unwrap(), Statement::Set(Some((k, v))) if k == "parallelism.default" && v == "2")
    );
    assert!(matches!(parse_statement("RESET").unwrap(), Statement::Reset(None)));
    let set = parse_statement(
        "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM t; INSERT INTO b SELECT * FROM t; END",
    )
    .unwrap();
    assert!(matches!(set, Statement::StatementSet(v) if v.len() == 2));
}

#[test]
fn a_script_splits_at_semicolons_outside_quotes_keeping_statement_sets_whole() {
    let (s, rest) =
        split_statements("SET 'a' = ';';\nEXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END;\nSELECT");
    assert_eq!(s.len(), 2);
    assert!(s[1].ends_with("END"));
    assert_eq!(rest, "SELECT");
}
