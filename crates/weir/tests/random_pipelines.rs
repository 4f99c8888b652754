//! Property: for random pipelines (random parallelism, partitioners, chaining on or
//! off) the multiset of outputs equals a sequential evaluation of the same steps.

use proptest::prelude::*;
use weir::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Step {
    Map(u64),
    Filter(u64),
    FlatMapDup,
    Rebalance,
    Rescale,
    Shuffle,
    Global,
    Broadcast,
    Forward,
    KeyedCount(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1u64..100).prop_map(Step::Map),
        (2u64..5).prop_map(Step::Filter),
        Just(Step::FlatMapDup),
        Just(Step::Rebalance),
        Just(Step::Rescale),
        Just(Step::Shuffle),
        Just(Step::Global),
        Just(Step::Broadcast),
        Just(Step::Forward),
        (1u64..20).prop_map(Step::KeyedCount),
    ]
}

#[derive(Clone)]
struct RunningCount;

impl KeyedProcessFunction<u64, u64, u64> for RunningCount {
    fn process_element(
        &mut self,
        _v: u64,
        ctx: &mut KeyedContext<'_, u64>,
        out: &mut Collector<'_, u64>,
    ) -> Result<(), UserError> {
        let key = *ctx.current_key().ok_or("no key")?;
        let mut c = ctx.value_state(&ValueStateDescriptor::<u64>::new("c"))?;
        let n = c.value().unwrap_or(0) + 1;
        c.update(n);
        out.collect(key * 1_000_000 + n);
        Ok(())
    }
}

/// Evaluates the steps sequentially. A broadcast step copies every record to each of
/// its `p` consumers.
fn reference(input: &[u64], steps: &[(Step, u32)]) -> Vec<u64> {
    let mut data = input.to_vec();
    for (s, p) in steps {
        match s {
            Step::Map(m) => data = data.into_iter().map(|v| v.wrapping_mul(*m) % 10_007).collect(),
            Step::Filter(d) => data.retain(|v| v % d != 0),
            Step::FlatMapDup => data = data.into_iter().flat_map(|v| [v, v + 1]).collect(),
            Step::KeyedCount(k) => {
                let mut counts = std::collections::HashMap::new();
                data = data
                    .into_iter()
                    .map(|v| {
                        let key = v % k;
                        let c = counts.entry(key).or_insert(0u64);
                        *c += 1;
                        key * 1_000_000 + *c
                    })
                    .collect();
            }
            Step::Broadcast => data = (0..*p).flat_map(|_| data.iter().copied()).collect(),
            _ => {}
        }
    }
    data.sort();
    data
}

fn run_pipeline(input: &[u64], steps: &[(Step, u32)], chaining: bool, source_p: u32) -> Vec<u64> {
    let mut env = StreamExecutionEnvironment::create_local_environment();
    env.set_parallelism(2);
    if !chaining {
        env.disable_operator_chaining();
    }
    let items = input.to_vec();
    let mut stream = env.from_collection(items).map(|v: u64| v).set_parallelism(source_p);
    let mut last_p = source_p;
    for (s, p) in steps {
        stream = match s {
            Step::Map(m) => {
                let m = *m;
                stream.map(move |v: u64| v.wrapping_mul(m) % 10_007).set_parallelism(*p)
            }
            Step::Filter(d) => {
                let d = *d;
                stream.filter(move |v: &u64| !v.is_multiple_of(d)).set_parallelism(*p)
            }
            Step::FlatMapDup => stream.flat_map(|v: u64| [v, v + 1]).set_parallelism(*p),
            Step::Rebalance => stream.rebalance().map(|v: u64| v).set_parallelism(*p),
            Step::Rescale => stream.rescale().map(|v: u64| v).set_parallelism(*p),
            Step::Shuffle => stream.shuffle().map(|v: u64| v).set_parallelism(*p),
            Step::Global => stream.global().map(|v: u64| v).set_parallelism(*p),
            Step::Broadcast => stream.broadcast().map(|v: u64| v).set_parallelism(*p),
            Step::Forward => stream.forward().map(|v: u64| v).set_parallelism(last_p),
            Step::KeyedCount(k) => {
                let k = *k;
                stream
                    .key_by(move |v: &u64| v % k)
                    .process(RunningCount)
                    .set_parallelism(*p)
            }
        };
        if !matches!(s, Step::Forward) {
            last_p = *p;
        }
    }
    let out = stream.collect();
    env.execute("random pipeline").unwrap();
    let mut got = out.get();
    got.sort();
    got
}

fn normalize(steps: &[(Step, u32)], source_p: u32) -> Vec<(Step, u32)> {
    // Forward keeps the parallelism of its producer.
    let mut last = source_p;
    steps
        .iter()
        .map(|(s, p)| {
            let p = if matches!(s, Step::Forward) { last } else { *p };
            last = p;
            (*s, p)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn random_pipelines_never_change_the_multiset_of_outputs(
        input in proptest::collection::vec(0u64..10_000, 0..400),
        steps in proptest::collection::vec((step(), 1u32..4), 1..5),
        chaining in any::<bool>(),
        source_p in 1u32..4,
    ) {
        let steps = normalize(&steps, source_p);
        let expected = reference(&input, &steps);
        let got = run_pipeline(&input, &steps, chaining, source_p);
        prop_assert_eq!(got, expected);
    }
}
