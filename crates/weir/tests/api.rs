//! The DataStream API end to end on the MiniCluster (JobMaster and TaskExecutor).

use weir::prelude::*;

#[test]
fn explicit_forward_across_different_parallelisms_is_rejected_with_flinks_message() {
    let env = StreamExecutionEnvironment::create_local_environment();
    env.from_collection(vec![1u64, 2])
        .map(|v: u64| v)
        .set_parallelism(2)
        .forward()
        .map(|v: u64| v)
        .set_parallelism(1)
        .discard();
    let err = env.execute("x").unwrap_err().to_string();
    assert!(
        err.starts_with("Forward partitioning does not allow change of parallelism."),
        "{err}"
    );
    assert!(
        err.contains("parallelism: 2, downstream operation: Map parallelism: 1"),
        "{err}"
    );
}

#[test]
fn union_merges_streams_and_partition_custom_routes_by_user_function() {
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(3);
    let a = env.from_collection((0..100u64).collect());
    let b = env.from_collection((100..150u64).collect());
    let out = a
        .union(&[b])
        .partition_custom(|v: &u64, n| (*v as usize) % n)
        .map(|v: u64| v)
        .collect();
    env.execute("union").unwrap();
    let mut got = out.get();
    got.sort();
    assert_eq!(got, (0..150).collect::<Vec<_>>());
}

#[test]
fn broadcast_delivers_every_record_to_every_subtask() {
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(3);
    let out = env.from_collection(vec![1u64, 2]).broadcast().map(|v: u64| v).collect();
    env.execute("broadcast").unwrap();
    let mut got = out.get();
    got.sort();
    assert_eq!(got, vec![1, 1, 1, 2, 2, 2]);
}

#[test]
fn keyed_state_list_and_map_state_survive_across_records_of_a_key() {
    #[derive(Clone)]
    struct Distinct;
    impl KeyedProcessFunction<u64, (u64, String), String> for Distinct {
        fn process_element(
            &mut self,
            v: (u64, String),
            ctx: &mut KeyedContext<'_, u64>,
            out: &mut Collector<'_, String>,
        ) -> Result<(), UserError> {
            let seen = MapStateDescriptor::<String, u32>::new("seen");
            let order = ListStateDescriptor::<String>::new("order");
            let mut m = ctx.map_state(&seen)?;
            if !m.contains(&v.1) {
                m.put(v.1.clone(), 1);
                ctx.list_state(&order)?.add(v.1.clone());
                let all = ctx.list_state(&order)?.get().join("+");
                out.collect(format!("{}:{}", v.0, all));
            }
            Ok(())
        }
    }
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    let data = vec![
        (1u64, "a".to_string()),
        (2, "x".into()),
        (1, "b".into()),
        (1, "a".into()),
        (2, "x".into()),
    ];
    let out = env
        .from_collection(data)
        .key_by(|v: &(u64, String)| v.0)
        .process(Distinct)
        .collect();
    env.execute("distinct").unwrap();
    let mut got = out.get();
    got.sort();
    assert_eq!(got, vec!["1:a", "1:a+b", "2:x"]);
}

#[test]
fn rolling_sum_min_max_follow_flink_aggregations() {
    let env = StreamExecutionEnvironment::create_local_environment();
    let data = vec![
        ("a".to_string(), 3i64),
        ("a".into(), 1),
        ("b".into(), 5),
        ("a".into(), 4),
    ];
    let sums = env
        .from_collection(data.clone())
        .key_by(|v: &(String, i64)| v.0.clone())
        .sum(|v: &mut (String, i64)| &mut v.1)
        .collect();
    let mins = env
        .from_collection(data.clone())
        .key_by(|v: &(String, i64)| v.0.clone())
        .min(|v: &mut (String, i64)| &mut v.1)
        .collect();
    let maxs = env
        .from_collection(data)
        .key_by(|v: &(String, i64)| v.0.clone())
        .max(|v: &mut (String, i64)| &mut v.1)
        .collect();
    env.execute("aggs").unwrap();
    let pick = |h: &CollectHandle<(String, i64)>, k: &str| {
        h.get()
            .into_iter()
            .filter(|v| v.0 == k)
            .map(|v| v.1)
            .collect::<Vec<_>>()
    };
    assert_eq!(pick(&sums, "a"), vec![3, 4, 8]);
    assert_eq!(pick(&mins, "a"), vec![3, 1, 1]);
    assert_eq!(pick(&maxs, "a"), vec![3, 3, 4]);
    assert_eq!(pick(&sums, "b"), vec![5]);
}

#[test]
fn a_failing_user_function_fails_the_job_with_its_message_and_task_name() {
    #[derive(Clone)]
    struct Boom;
    impl KeyedProcessFunction<u64, u64, u64> for Boom {
        fn process_element(
            &mut self,
            v: u64,
            _ctx: &mut KeyedContext<'_, u64>,
            _out: &mut Collector<'_, u64>,
        ) -> Result<(), UserError> {
            if v == 7 {
                return Err("seven is not allowed".into());
            }
            Ok(())
        }
    }
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    env.from_generator(1000, 1, |i, _| i)
        .key_by(|v: &u64| *v)
        .process(Boom)
        .name("Boom")
        .discard();
    let err = env.execute("boom").unwrap_err().to_string();
    assert!(err.contains("seven is not allowed"), "{err}");
    assert!(err.contains("Boom"), "{err}");
}

#[test]
fn buffer_timeout_zero_and_minus_one_deliver_the_same_records() {
    for timeout in [0i64, -1, 5] {
        let mut env = StreamExecutionEnvironment::create_local_environment();
        env.set_parallelism(2).set_buffer_timeout(timeout);
        let out = env
            .from_generator(5000, 3, |i, _| i)
            .rebalance()
            .map(|v: u64| v * 2)
            .collect();
        env.execute("timeouts").unwrap();
        let mut got = out.get();
        got.sort();
        assert_eq!(got, (0..5000).map(|v| v * 2).collect::<Vec<_>>(), "timeout {timeout}");
    }
}
