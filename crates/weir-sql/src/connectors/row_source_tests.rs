use super::*;
use crate::catalog::{Catalog, CatalogObject};

fn table(ddl: &str) -> ResolvedTable {
    let catalog = Catalog::from_script(ddl).unwrap();
    let CatalogObject::Table(def) = catalog.get("o").unwrap() else {
        panic!("o is a table");
    };
    ResolvedTable::resolve(def).unwrap()
}

const ORDERS: &str = "CREATE TABLE o (seq BIGINT, id AS seq, u AS CAST(MOD(seq * 7919, 10000) AS INT), \
     ts AS TO_TIMESTAMP_LTZ(1000 + seq * 10, 3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) \
     WITH ('connector' = 'datagen')";

#[test]
fn a_projected_row_holds_the_read_columns_only_and_is_stamped_with_its_unread_rowtime() {
    let t = table(ORDERS);
    let physical = vec![Value::Int(3)];
    let full = Completer::new(Arc::new(t.clone())).complete(physical.clone()).unwrap();
    assert_eq!(
        full.values,
        vec![
            Value::Int(3),
            Value::Int(3),
            Value::Int(3 * 7919 % 10000),
            Value::Timestamp(1030)
        ]
    );
    let projected = Completer::new(Arc::new(t.project(&[2])));
    assert_eq!(projected.width(), 1);
    let record = projected.record(&physical, Some(7)).unwrap();
    assert_eq!(record.value, Row::insert(vec![full.values[2].clone()]));
    assert_eq!(record.value.values.capacity(), 1);
    assert_eq!(record.timestamp, Some(1030));
}

#[test]
fn a_projected_row_that_reads_the_rowtime_is_stamped_from_it_and_keeps_the_picked_order() {
    let t = table(ORDERS);
    let p = t.project(&[3, 0]);
    assert_eq!(p.rowtime, Some(0));
    assert_eq!(p.emitted_rowtime(), Some(0));
    let record = Completer::new(Arc::new(p)).record(&[Value::Int(5)], None).unwrap();
    assert_eq!(record.value.values, vec![Value::Timestamp(1050), Value::Int(5)]);
    assert_eq!(record.timestamp, Some(1050));
    // Unread, the rowtime stays evaluated past the emitted columns.
    let hidden = t.project(&[1]);
    assert_eq!((hidden.rowtime, hidden.emitted_rowtime()), (Some(1), None));
}

#[test]
fn rows_of_a_table_without_rowtime_keep_the_records_timestamp_and_a_null_rowtime_stamps_the_minimum() {
    let t = table("CREATE TABLE o (a BIGINT, b AS a * 2) WITH ('connector' = 'datagen')");
    let record = Completer::new(Arc::new(t)).record(&[Value::Int(4)], Some(9)).unwrap();
    assert_eq!(record.value.values, vec![Value::Int(4), Value::Int(8)]);
    assert_eq!(record.timestamp, Some(9));
    let t = table(ORDERS).project(&[1]);
    let record = Completer::new(Arc::new(t)).record(&[Value::Null], Some(9)).unwrap();
    assert_eq!(record.value.values, vec![Value::Null]);
    assert_eq!(record.timestamp, Some(i64::MIN));
}

#[test]
fn an_unread_physical_rowtime_stamps_the_record_and_a_failing_computed_column_names_the_source() {
    let t = table(
        "CREATE TABLE o (s STRING, ts TIMESTAMP(3), n AS CAST(s AS INT) + 1, \
         WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen')",
    );
    let projected = Completer::new(Arc::new(t.project(&[2])));
    let physical = [Value::Str("41".into()), Value::Timestamp(77)];
    let record = projected.record(&physical, Some(3)).unwrap();
    assert_eq!(record.value.values, vec![Value::Int(42)]);
    assert_eq!(record.timestamp, Some(77));
    let bad = [Value::Str("abc".into()), Value::Timestamp(77)];
    let err = projected.record(&bad, Some(3)).unwrap_err().to_string();
    assert!(err.contains("Source: o"), "{err}");
    assert!(
        err.contains("For input string: 'abc'. Invalid character found."),
        "{err}"
    );
}
