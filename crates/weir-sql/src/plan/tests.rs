use super::explain::explain;
use super::query::plan_query;
use crate::catalog::Catalog;
use crate::parser::{parse_statement, Statement};

fn catalog() -> Catalog {
    Catalog::from_script(
        "CREATE TABLE orders (user_id BIGINT, amount DECIMAL(10, 2), ts_millis BIGINT, \
         ts AS TO_TIMESTAMP_LTZ(ts_millis, 3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) \
         WITH ('connector' = 'datagen');\
         CREATE VIEW big AS SELECT user_id, amount FROM orders WHERE amount > 500;",
    )
    .unwrap()
}

fn plan(sql: &str) -> Result<String, String> {
    let Statement::Query(q) = parse_statement(sql).map_err(|e| e.to_string())? else {
        return Err("not a query".into());
    };
    plan_query(&q, &catalog())
        .map(|p| explain(&p))
        .map_err(|e| e.to_string())
}

#[test]
fn projection_and_filter_become_one_calc_named_by_what_it_does() {
    let p = plan("SELECT user_id, amount FROM orders WHERE amount > 500").unwrap();
    assert!(
        p.starts_with("Calc(select=[user_id, amount], where=[amount > 500])\n"),
        "{p}"
    );
    assert!(
        p.contains("TableSourceScan(table=[[default_catalog, default_database, orders]]"),
        "{p}"
    );
}

#[test]
fn group_by_plans_calc_group_aggregate_calc_and_a_window_tvf_a_window_aggregate() {
    let p = plan("SELECT user_id, COUNT(*) AS cnt FROM big GROUP BY user_id HAVING COUNT(*) > 1").unwrap();
    assert!(
        p.contains("GroupAggregate(groupBy=[user_id], select=[user_id, COUNT(*)])"),
        "{p}"
    );
    assert!(
        p.starts_with("Calc(select=[user_id, COUNT(*) AS cnt], where=[COUNT(*) > 1])"),
        "{p}"
    );
    let p = plan(
        "SELECT window_start, user_id, SUM(amount) FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)) \
         GROUP BY window_start, window_end, user_id",
    )
    .unwrap();
    assert!(
        p.contains("window=[HOP(time_col=[ts], size=[5 min], slide=[1 min])]"),
        "{p}"
    );
}

#[test]
fn unknown_objects_ungrouped_columns_and_unsupported_features_are_named() {
    assert_eq!(
        plan("SELECT * FROM x").unwrap_err(),
        "SQL validation failed. Object 'x' not found"
    );
    assert_eq!(
        plan("SELECT amount, COUNT(*) FROM orders GROUP BY user_id").unwrap_err(),
        "SQL validation failed. Expression 'amount' is not being grouped"
    );
    assert_eq!(
        plan("SELECT * FROM orders a JOIN orders b ON a.user_id = b.user_id").unwrap_err(),
        "Join is not supported yet"
    );
    assert!(plan("SELECT user_id FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(user_id), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, user_id")
        .unwrap_err()
        .contains("requires the timecol is a time attribute type"));
}

#[test]
fn union_all_merges_inputs_of_matching_columns() {
    let p = plan("SELECT user_id FROM orders UNION ALL SELECT user_id FROM (SELECT user_id FROM big)").unwrap();
    assert!(p.starts_with("Union(all=[true], union=[user_id])"), "{p}");
    assert!(
        plan("SELECT user_id FROM orders UNION ALL SELECT user_id, amount FROM orders")
            .unwrap_err()
            .contains("Column count mismatch")
    );
}

#[test]
fn the_legacy_group_window_plans_a_window_aggregate_with_its_start_and_end() {
    let p = plan(
        "SELECT user_id, TUMBLE_START(ts, INTERVAL '1' MINUTE) AS ws, TUMBLE_END(ts, INTERVAL '1' MINUTE), COUNT(*) \
         FROM orders GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), user_id",
    )
    .unwrap();
    assert!(
        p.contains("WindowAggregate(groupBy=[user_id], window=[TUMBLE(time_col=[ts], size=[1 min])]"),
        "{p}"
    );
    assert!(
        plan("SELECT COUNT(*) FROM orders GROUP BY TUMBLE(user_id, INTERVAL '1' MINUTE)")
            .unwrap_err()
            .contains("time attribute")
    );
}

#[test]
fn a_calc_only_selecting_datagen_columns_becomes_the_scan_of_those_columns() {
    let p = plan("SELECT amount, ts FROM orders").unwrap();
    assert_eq!(
        p,
        "TableSourceScan(table=[[default_catalog, default_database, orders, project=[amount, ts]]], fields=[amount, ts])\n"
    );
    let p = plan(
        "SELECT window_start, user_id, SUM(amount) FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) \
         GROUP BY window_start, window_end, user_id",
    )
    .unwrap();
    let below_exchange = p.lines().skip_while(|l| !l.contains("Exchange(")).nth(1).unwrap();
    assert_eq!(
        below_exchange.trim_start(),
        "+- TableSourceScan(table=[[default_catalog, default_database, orders, project=[user_id, amount]]], fields=[user_id, amount])",
        "{p}"
    );
    assert_eq!(
        plan("SELECT * FROM orders").unwrap(),
        "TableSourceScan(table=[[default_catalog, default_database, orders]], fields=[user_id, amount, ts_millis, ts])\n"
    );
    // A filter, a computed projection or a column selected twice keeps its Calc.
    for sql in [
        "SELECT user_id FROM orders WHERE amount > 500",
        "SELECT user_id + 1 FROM orders",
        "SELECT user_id, user_id AS u FROM orders",
    ] {
        let p = plan(sql).unwrap();
        assert!(p.starts_with("Calc(select=["), "{sql}: {p}");
        assert!(
            p.contains("TableSourceScan(table=[[default_catalog, default_database, orders]], fields=[user_id, amount, ts_millis, ts])"),
            "{sql}: {p}"
        );
    }
}
