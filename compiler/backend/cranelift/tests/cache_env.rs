//! `DRS_CACHE_DIR` and `DRS_NO_DISK_CACHE` (a test binary of its own: it sets environment
//! variables).

use drs_cranelift::{CacheKey, KernelCache, Lanes, Options};
use drs_ir::*;

#[test]
fn the_environment_chooses_the_disk_directory() {
    let root = std::env::temp_dir().join(format!("drs-cache-env-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::env::set_var("DRS_CACHE_DIR", &root);
    std::env::remove_var("DRS_NO_DISK_CACHE");
    assert_eq!(KernelCache::default_dir(), Some(root.join("kernels")));

    let mut m = Module::default();
    let mut f = Function::new("id");
    let x = f.add_param("x", Ty::I32);
    f.body.yields = vec![x];
    f.result_types = vec![Ty::I32];
    m.add_function(f);
    let options = Options::new(Lanes::X8);
    let cache = KernelCache::new();
    assert_eq!(cache.dir(), Some(root.join("kernels").as_path()));
    cache.get_or_compile(&m, &options).unwrap();
    let key = CacheKey::of(&m, &options).unwrap();
    assert!(root.join("kernels").join(format!("{}.bin", key.to_hex())).exists());
    // The process-wide cache reads the environment when first used.
    assert_eq!(KernelCache::global().dir(), Some(root.join("kernels").as_path()));

    std::env::set_var("DRS_NO_DISK_CACHE", "1");
    assert_eq!(KernelCache::default_dir(), None);
    assert!(KernelCache::new().dir().is_none());
    std::env::set_var("DRS_NO_DISK_CACHE", "0");
    assert!(KernelCache::default_dir().is_some());
    std::env::remove_var("DRS_CACHE_DIR");
    std::env::remove_var("DRS_NO_DISK_CACHE");
    // Without DRS_CACHE_DIR: the user's cache directory (not touched here).
    if let Some(dir) = KernelCache::default_dir() {
        assert!(dir.ends_with("drs/kernels"), "{}", dir.display());
    }
    let _ = std::fs::remove_dir_all(&root);
}
