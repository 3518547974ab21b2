//! `fold_in_order`: results folded in item order whatever the thread count and timing.

use std::time::Duration;

use drs_film::fold_in_order;

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
}

/// An item's value: large and small ones alternate, so that a float sum depends on the order.
fn value(item: u32) -> f32 {
    if item.is_multiple_of(3) {
        1e8
    } else {
        1.0 + item as f32 * 1e-3
    }
}

/// Uneven work, so that items finish out of order.
fn work(item: &u32) -> Result<f32, String> {
    std::thread::sleep(Duration::from_micros(u64::from(item * 37 % 11) * 50));
    Ok(value(*item))
}

#[test]
fn results_are_folded_in_item_order_with_any_thread_count() {
    let items: Vec<u32> = (0..200).collect();
    let expected = items.iter().fold(0.0f32, |sum, &item| sum + value(item));
    for threads in [1, 2, 3, 8] {
        let (mut sum, mut order) = (0.0f32, Vec::new());
        pool(threads)
            .install(|| {
                fold_in_order(&items, work, |v| {
                    sum += v;
                    order.push(v);
                })
            })
            .unwrap();
        assert_eq!(sum.to_bits(), expected.to_bits(), "{threads} threads");
        assert_eq!(order, items.iter().map(|&i| value(i)).collect::<Vec<_>>());
    }
}

#[test]
fn the_first_failing_item_is_reported_after_a_prefix_was_folded() {
    let items: Vec<u32> = (0..60).collect();
    for threads in [1, 2, 4] {
        let mut folded = Vec::new();
        let result = pool(threads).install(|| {
            fold_in_order(
                &items,
                |&item| if item == 20 || item == 33 { Err(format!("item {item}")) } else { work(&item) },
                |v| folded.push(v),
            )
        });
        assert_eq!(result, Err("item 20".to_string()), "{threads} threads");
        assert_eq!(folded, (0..20).map(value).collect::<Vec<_>>(), "{threads} threads");
    }
}

#[test]
fn no_items_fold_nothing() {
    let mut calls = 0;
    fold_in_order(&[] as &[u32], work, |_| calls += 1).unwrap();
    assert_eq!(calls, 0);
}
