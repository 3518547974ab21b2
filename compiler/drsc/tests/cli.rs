//! The command line, run as a user runs it: exit codes, output formats, files written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn drsc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_drsc")).args(args).env("NO_COLOR", "1").output().expect("drsc runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory for this test, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("drsc-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creating a scratch directory");
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writing a source file");
    path.display().to_string()
}

const SHADE: &str = r#"
struct Hit { t: f32, front: bool }

fn shade(n: vec3, l: vec3, albedo: Color) -> Color {
    let c = max(dot(normalize(n), normalize(l)), 0.0);
    albedo * (c * INV_PI)
}

fn waves(x: f32, n: i32) -> (f32, i32) {
    var s = 0.0;
    var k = 0;
    for i in 0..n {
        if i % 3 == 2 { continue; }
        s += sin(x * f32(i)) + pow(x, 1.5);
        k += 1;
    }
    (s, k)
}

fn hit(t: f32) -> Hit { Hit { t: t * 2.0, front: t > 0.0 } }
"#;

#[test]
fn check_reports_errors_with_exit_code_and_json() {
    let dir = scratch("check");
    let good = write(&dir, "good.drs", SHADE);
    let bad = write(&dir, "bad.drs", "fn f(x: f32) -> f32 {\n    x * 2\n}\n");
    let ok = drsc(&["check", &good]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(stdout(&ok).contains("no errors"));

    let human = drsc(&["check", &bad]);
    assert_eq!(human.status.code(), Some(1));
    assert!(stderr(&human).contains("[E0201]"), "{}", stderr(&human));
    assert!(stderr(&human).contains("bad.drs:2:5"), "{}", stderr(&human));

    let json = drsc(&["check", "--format", "json", &bad]);
    assert_eq!(json.status.code(), Some(1));
    let line = stderr(&json);
    for field in ["\"code\":\"E0201\"", "\"line\":2", "\"column\":5", "\"end\":{", "\"message\":", "\"file\":"] {
        assert!(line.contains(field), "missing {field} in {line}");
    }
    assert_eq!(line.lines().count(), 1);

    let missing = drsc(&["check", &dir.join("nope.drs").display().to_string()]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("cannot read"));
}

#[test]
fn eval_prints_values_and_backends_agree() {
    let dir = scratch("eval");
    let file = write(&dir, "shade.drs", SHADE);
    let calls =
        ["shade(vec3(0.0, 0.0, 1.0), vec3(0.3, 0.2, 1.0), Color(0.5, 0.25, 1.0))", "waves(1.3, 9)", "hit(-0.25)"];
    for call in calls {
        let reference = drsc(&["eval", &file, "--call", call]);
        assert!(reference.status.success(), "{call}: {}", stderr(&reference));
        let expected = stdout(&reference);
        for lanes in ["1", "4", "8"] {
            let out = drsc(&["eval", &file, "--call", call, "--backend", "cranelift", "--lanes", lanes]);
            assert!(out.status.success(), "{call} x{lanes}: {}", stderr(&out));
            assert_eq!(stdout(&out), expected, "{call} with {lanes} lanes");
        }
    }
    assert_eq!(stdout(&drsc(&["eval", &file, "--call", "hit(-0.25)"])).trim(), "Hit { t: -0.5, front: false }");
    let waves = stdout(&drsc(&["eval", &file, "--call", "waves(0.0, 9)"]));
    assert_eq!(waves.trim(), "(0.0, 6)");
    let color =
        stdout(&drsc(&["eval", &file, "--call", "shade(vec3(0.0, 0.0, 1.0), vec3(0.0, 0.0, 1.0), Color(1.0))"]));
    assert_eq!(color.trim(), format!("[{0:?}, {0:?}, {0:?}]", std::f32::consts::FRAC_1_PI));
}

#[test]
fn eval_rejects_bad_calls() {
    let dir = scratch("eval-bad");
    let file = write(&dir, "shade.drs", SHADE);
    for (call, message) in [
        ("waves(1.0)", "takes 2 arguments"),
        ("nothing(1.0)", "no function `nothing`"),
        ("waves(vec3(1.0), 2)", "argument `x`"),
        ("waves(1.0, 2", "call"),
    ] {
        let out = drsc(&["eval", &file, "--call", call]);
        assert_eq!(out.status.code(), Some(1), "{call}");
        assert!(stderr(&out).contains(message), "{call}: {}", stderr(&out));
    }
    let lanes = drsc(&["eval", &file, "--call", "waves(1.0, 2)", "--lanes", "3"]);
    assert!(!lanes.status.success());
}

#[test]
fn ir_prints_functions() {
    let dir = scratch("ir");
    let file = write(&dir, "shade.drs", SHADE);
    let out = drsc(&["ir", &file, "--fn", "shade", "--opt", "default"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("fn shade(%0 n.x: f32"), "{text}");
    assert!(text.contains("sqrt"), "{text}");
    let expanded = stdout(&drsc(&["ir", &file, "--fn", "waves", "--expand-math"]));
    assert!(!expanded.contains(" sin "), "sin is expanded into the math library:\n{expanded}");
}

#[test]
fn build_writes_a_loadable_artifact_and_never_a_broken_one() {
    let dir = scratch("build");
    let file = write(&dir, "shade.drs", SHADE);
    let out_path = dir.join("shade.drsa");
    let out = out_path.display().to_string();
    let built = drsc(&["build", &file, "-o", &out]);
    assert!(built.status.success(), "{}", stderr(&built));
    let artifact = drs_artifact::Artifact::read(&out_path).expect("the artifact loads");
    let shade = artifact.functions.iter().find(|f| f.name == "shade").expect("shade is in the artifact");
    assert_eq!(shade.params.iter().map(|p| p.ty.as_str()).collect::<Vec<_>>(), ["vec3", "vec3", "Color"]);
    assert_eq!(shade.result.scalars, 3);
    drs_ir::verify_module(&artifact.module).expect("the artifact's IR verifies");

    // A failed build leaves an existing output untouched.
    let before = std::fs::read(&out_path).unwrap();
    let bad = write(&dir, "bad.drs", "fn f() -> f32 { 1 }\n");
    let failed = drsc(&["build", &bad, "-o", &out]);
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(std::fs::read(&out_path).unwrap(), before);
}

/// Runs IR function `name` on one lane of `jit` with `args` (all lanes get the same).
fn run_kernel(jit: &drs_cranelift::Jit, name: &str, args: &[u32]) -> Vec<u32> {
    let n = jit.lanes().count();
    let kernel = jit.function(name).expect("the function is in the artifact");
    let lanes: Vec<u32> = args.iter().flat_map(|&a| std::iter::repeat_n(a, n)).collect();
    let mut out = vec![0u32; kernel.results().len() * n];
    // The program has no buffers.
    kernel.call(&lanes, &mut out, &[], &jit.externs()).expect("the kernel runs");
    (0..kernel.results().len()).map(|r| out[r * n]).collect()
}

#[test]
fn built_artifacts_run_without_sources_from_native_code_or_ir() {
    use drs_cranelift::{native_for_host, Jit, Lanes};
    let dir = scratch("build-native");
    let file = write(&dir, "shade.drs", SHADE);
    let native_path = dir.join("native.drsa");
    let ir_path = dir.join("ir.drsa");
    let built = drsc(&["build", &file, "-o", &native_path.display().to_string()]);
    assert!(built.status.success(), "{}", stderr(&built));
    assert!(stdout(&built).contains("native code for"), "{}", stdout(&built));
    let ir_only = drsc(&["build", &file, "--no-native", "-o", &ir_path.display().to_string()]);
    assert!(ir_only.status.success(), "{}", stderr(&ir_only));
    // The runtime needs no sources.
    std::fs::remove_file(&file).unwrap();

    let native = drs_artifact::Artifact::read(&native_path).expect("the artifact loads");
    let ir = drs_artifact::Artifact::read(&ir_path).expect("the artifact loads");
    assert_eq!(native.native.iter().map(|n| n.lanes).collect::<Vec<_>>(), [1, 4, 8]);
    assert!(ir.native.is_empty());
    assert_eq!(native.module, ir.module);
    let waves = |x: f32, n: i32| [x.to_bits(), n as u32];
    for lanes in Lanes::ALL {
        assert!(native_for_host(&native, lanes).is_some(), "{lanes:?}");
        let from_native = Jit::from_artifact(&native, lanes).expect("native code loads");
        let from_ir = Jit::from_artifact(&ir, lanes).expect("the IR compiles");
        assert_eq!(run_kernel(&from_native, "waves", &waves(0.0, 9)), [0, 6]);
        assert_eq!(run_kernel(&from_native, "hit", &[(-0.25f32).to_bits()]), [(-0.5f32).to_bits(), 0]);
        for (x, n) in [(1.3, 9), (-0.7, 4), (2.5, 0)] {
            let a = run_kernel(&from_native, "waves", &waves(x, n));
            assert_eq!(a, run_kernel(&from_ir, "waves", &waves(x, n)), "waves({x}, {n}) {lanes:?}");
        }
    }
}

#[test]
fn ad_prints_derivatives_that_check_again() {
    let dir = scratch("ad");
    let file = write(&dir, "shade.drs", SHADE);
    for mode in ["fwd", "bwd"] {
        for opt in ["none", "basic", "default"] {
            let out = drsc(&["ad", &file, "--fn", "shade", "--mode", mode, "--opt", opt]);
            assert!(out.status.success(), "{mode} {opt}: {}", stderr(&out));
            let text = stdout(&out);
            let name = if mode == "fwd" { "shade__fwd" } else { "shade__bwd" };
            assert!(text.contains(&format!("fn {name}(")), "{text}");
            let written = write(&dir, &format!("{mode}_{opt}.drs"), &text);
            let check = drsc(&["check", &written]);
            assert!(check.status.success(), "{mode} {opt} output does not check:\n{}\n{text}", stderr(&check));
        }
    }
    // The derivative computes what it should: d/dalbedo of shade along (1, 0, 0).
    let program = format!(
        "{SHADE}\nfn probe() -> (Color, Color) {{ fwd_diff(shade)(vec3(0.0, 0.0, 1.0), vec3(0.0, 0.0, 1.0), Color(0.5), \
         vec3(0.0), vec3(0.0), Color(1.0, 0.0, 0.0)) }}"
    );
    let file = write(&dir, "probe.drs", &program);
    let out = drsc(&["eval", &file, "--call", "probe()", "--backend", "cranelift", "--lanes", "4"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "([0.15915494, 0.15915494, 0.15915494], [0.31830987, 0.0, 0.0])");
}

#[test]
fn ad_reports_errors() {
    let dir = scratch("ad-errors");
    let file = write(
        &dir,
        "loop.drs",
        "fn f(x: f32) -> f32 {\n    var y = x;\n    while y < 10.0 {\n        y = y * 2.0;\n    }\n    y\n}\n",
    );
    let out = drsc(&["ad", &file, "--fn", "f", "--mode", "bwd"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("loop.drs:3:5:") && stderr(&out).contains("@max_iters"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    // Forward mode differentiates any loop.
    assert!(drsc(&["ad", &file, "--fn", "f", "--mode", "fwd"]).status.success());
    let out = drsc(&["ad", &file, "--fn", "nope", "--mode", "fwd"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no function `nope`"), "{}", stderr(&out));
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path).display().to_string()
}

/// `drsc render` writes the image and a final timing line; `-D` overrides scene defaults.
#[test]
fn render_writes_an_image_and_reports_its_speed() {
    let dir = scratch("render");
    let out = dir.join("box.png");
    let o = drsc(&[
        "render",
        &repo("lang-examples/cornell_box.xml"),
        "-o",
        &out.display().to_string(),
        "--spp",
        "2",
        "-D",
        "resx=24",
        "-D",
        "resy=16",
        "--threads",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let last = stdout(&o).lines().last().unwrap_or_default().to_owned();
    assert!(last.starts_with("drsc render: ") && last.contains("Msamples/s (24x16, 2 spp"), "{last}");
    let image = drs_film::load_image(&out).expect("a PNG was written");
    assert_eq!((image.width(), image.height()), (24, 16));
}

/// A broken scene is a located error, exit 1, and the output file is left alone.
#[test]
fn render_errors_do_not_overwrite_the_output() {
    let dir = scratch("render-errors");
    let scene = write(
        &dir,
        "bad.xml",
        "<scene version=\"3.0.0\">\n  <sensor type=\"perspective\"/>\n  <bsdf type=\"velvet\"/>\n</scene>\n",
    );
    let out = write(&dir, "out.png", "keep me");
    let o = drsc(&["render", &scene, "-o", &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.xml:3:3") && stderr(&o).contains("velvet"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
    let o = drsc(&["render", &repo("lang-examples/cornell_box.xml"), "-o", &dir.join("x.bmp").display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(".exr or .png"), "{}", stderr(&o));
}

/// `drsc params` lists keys, types and values.
#[test]
fn params_lists_the_scene_parameters() {
    let o = drsc(&["params", &repo("lang-examples/cornell_box.xml")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let red = text.lines().find(|l| l.starts_with("red.reflectance.value ")).unwrap_or_else(|| panic!("{text}"));
    assert!(red.contains("Color") && red.contains("[0.63, 0.065, 0.05]"), "{red}");
    assert!(text.lines().any(|l| l.starts_with("integrator0.max_depth ") && l.contains("8")), "{text}");
}

/// `drsc grad` prints the loss and the gradients as JSON; the plain reverse-mode reference
/// agrees with path replay; unknown or non-differentiable keys are errors.
#[test]
fn grad_prints_json_gradients() {
    let dir = scratch("grad");
    let target = dir.join("target.exr").display().to_string();
    let small = ["-D", "resx=12", "-D", "resy=8", "-D", "max_depth=3"];
    let box_scene = repo("lang-examples/cornell_box.xml");
    let mut args = vec!["render", &box_scene, "-o", &target, "--spp", "16", "-q"];
    args.extend(small);
    args.extend(["-D", "red=0.2, 0.2, 0.8"]);
    assert!(drsc(&args).status.success());
    let scene = repo("lang-examples/cornell_box.xml");
    let grad = |integrator: &str, key: &str| {
        let mut args = vec!["grad", &scene, "--ref", &target, "--param", key, "--spp", "4", "--integrator", integrator];
        args.extend(small);
        drsc(&args)
    };
    let mut values = Vec::new();
    for integrator in ["prb", "path-ad", "rb", "rb-biased"] {
        let o = grad(integrator, "red.reflectance.value");
        assert!(o.status.success(), "{}", stderr(&o));
        let json: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert!(json["loss"].as_f64().unwrap() > 0.0);
        let g: Vec<f64> =
            json["grads"]["red.reflectance.value"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(g.len(), 3);
        // The target's red wall is bluer: the loss falls with more blue.
        assert!(g[2] < 0.0, "{g:?}");
        values.push(g);
    }
    for (p, r) in values[0].iter().zip(&values[1]) {
        assert!((p - r).abs() <= 1e-4 * r.abs() + 1e-9, "prb {:?} vs path-ad {:?}", values[0], values[1]);
    }
    // rb's own radiance estimates make it differ from prb a little, rb-biased a lot. That noise
    // scales with the gradient as a whole, so it is bounded by its largest component (green's is
    // a hundredth of red's and may differ by more than a fifth of itself).
    let scale = values[0].iter().fold(0.0f64, |m, p| m.max(p.abs()));
    assert!(values[2].iter().zip(&values[0]).all(|(r, p)| r != p && (r - p).abs() < 0.2 * scale), "{values:?}");
    // Biased RB keeps the signs of the components that matter, red and blue (green's gradient
    // is 100 times smaller, noise around zero whose sign the biased estimate need not keep).
    assert!([0, 2].iter().all(|&c| values[3][c] * values[0][c] > 0.0 && values[3][c] != values[0][c]), "{values:?}");
    let o = grad("rb-biased-typo", "red.reflectance.value");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("rb-biased-typo"), "{}", stderr(&o));
    let o = grad("prb", "integrator0.max_depth");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no derivatives"), "{}", stderr(&o));
    let o = grad("prb", "nope.value");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nope.value"), "{}", stderr(&o));
}

/// The red-wall example of lang-examples/inverse, at a small size: Adam recovers the colour
/// Mitsuba 3 rendered the target with, (0.1, 0.45, 0.6).
#[test]
fn optimize_recovers_the_red_wall_of_the_example() {
    let dir = scratch("optimize");
    let out = dir.join("result.json");
    let o = drsc(&[
        "optimize",
        &repo("lang-examples/cornell_box.xml"),
        "-D",
        "resx=64",
        "-D",
        "resy=64",
        "-D",
        "max_depth=4",
        "--ref",
        &repo("lang-examples/inverse/red_wall_target.exr"),
        "--param",
        "red.reflectance.value",
        "--iters",
        "60",
        "--lr",
        "0.03",
        "--clamp",
        "0,1",
        "--spp",
        "4",
        "-q",
        "-o",
        &out.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(json["loss"].as_array().unwrap().len(), 60);
    let seconds = json["seconds"].as_array().unwrap();
    assert!(seconds.len() == 60 && seconds.iter().all(|s| s.as_f64().unwrap() > 0.0), "{seconds:?}");
    let red: Vec<f64> =
        json["params"]["red.reflectance.value"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    for (r, t) in red.iter().zip([0.1, 0.45, 0.6]) {
        assert!((r - t).abs() < 0.06, "recovered {red:?}");
    }
}

/// A render of the Cornell box (small) with the given extra arguments, and the JSON of `drsc
/// grad` against it for the red wall after changing that wall's colour.
#[cfg(feature = "llvm")]
fn render_and_grad(dir: &Path, name: &str, extra: &[&str]) -> (Vec<f32>, String) {
    let scene = repo("lang-examples/cornell_box.xml");
    let small = ["-D", "resx=16", "-D", "resy=12", "-D", "max_depth=4", "--spp", "4", "--threads", "2"];
    let image = dir.join(format!("{name}.exr")).display().to_string();
    let mut args = vec!["render", &scene, "-o", &image, "-q"];
    args.extend(small.iter().chain(extra));
    let o = drsc(&args);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    let pixels = drs_film::load_image(Path::new(&image)).expect("an EXR was written").data().to_vec();
    let mut args = vec!["grad", &scene, "--ref", &image, "--param", "red.reflectance.value", "-D", "red=0.2, 0.2, 0.8"];
    args.extend(small.iter().chain(extra));
    let o = drsc(&args);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    (pixels, stdout(&o))
}

/// The LLVM backend renders the same image, bit for bit, as Cranelift at every width (the
/// kernels' lanes never mix, and both follow the IR's exact semantics), and the same gradients
/// up to rounding: samples add to a parameter's gradient in an order that depends on how they
/// are grouped into lanes.
#[cfg(feature = "llvm")]
#[test]
fn llvm_renders_and_differentiates_as_cranelift_does() {
    let dir = scratch("llvm");
    let gradient = |json: &str| -> Vec<f64> {
        let json: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
        json["grads"]["red.reflectance.value"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
    };
    let (image, grads) = render_and_grad(&dir, "cranelift", &[]);
    let grads = gradient(&grads);
    let scale = grads.iter().fold(0.0f64, |m, g| m.max(g.abs()));
    for lanes in ["1", "4", "8", "16"] {
        let (llvm_image, llvm_grads) = render_and_grad(&dir, lanes, &["--backend", "llvm", "--lanes", lanes]);
        assert!(llvm_image == image, "{lanes} lanes: the LLVM image differs from Cranelift's");
        let llvm_grads = gradient(&llvm_grads);
        let close = llvm_grads.iter().zip(&grads).all(|(l, c)| (l - c).abs() <= 1e-5 * scale);
        assert!(close, "{lanes} lanes: {llvm_grads:?} against Cranelift's {grads:?}");
    }
    let file = write(&dir, "shade.drs", SHADE);
    let call = "shade(vec3(0.0, 0.0, 1.0), vec3(0.3, 0.2, 1.0), Color(0.5, 0.25, 1.0))";
    let expected = stdout(&drsc(&["eval", &file, "--call", call]));
    let out = drsc(&["eval", &file, "--call", call, "--backend", "llvm", "--lanes", "16"]);
    assert_eq!(stdout(&out), expected, "{}", stderr(&out));
}

/// Backend choices that cannot run are errors that say why.
#[test]
fn unavailable_backends_are_errors() {
    let dir = scratch("backends");
    let out = dir.join("x.png").display().to_string();
    let scene = repo("lang-examples/cornell_box.xml");
    let o = drsc(&["render", &scene, "-o", &out, "--lanes", "16"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("16 lanes need `--backend llvm`"), "{}", stderr(&o));
    if cfg!(not(feature = "llvm")) {
        let o = drsc(&["render", &scene, "-o", &out, "--backend", "llvm"]);
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains("built without LLVM"), "{}", stderr(&o));
    }
    assert!(!Path::new(&out).exists());
}

/// Every test scene (every stdlib plugin) renders the same image bits with LLVM's 16-lane code
/// as with Cranelift's 4-lane code.
#[cfg(feature = "llvm")]
#[test]
fn llvm_renders_every_test_scene_as_cranelift_does() {
    let dir = scratch("llvm-scenes");
    let scenes = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenes");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&scenes)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "{names:?}");
    for scene in names {
        let name = scene.file_stem().unwrap().to_string_lossy().into_owned();
        let render = |backend: &[&str]| {
            let out = dir.join(format!("{name}-{}.exr", backend.join("-"))).display().to_string();
            let mut args = vec!["render", scene.to_str().unwrap(), "-o", &out, "-q", "--spp", "2"];
            args.extend(["-D", "resx=16", "-D", "resy=12"]);
            args.extend(backend);
            let o = drsc(&args);
            assert!(o.status.success(), "{name} {backend:?}: {}", stderr(&o));
            drs_film::load_image(Path::new(&out)).unwrap().data().to_vec()
        };
        let cranelift = render(&["--lanes", "4"]);
        let llvm = render(&["--backend", "llvm", "--lanes", "16"]);
        assert!(cranelift == llvm, "{name}: LLVM's image differs from Cranelift's");
    }
}

/// Without `--lanes`, Cranelift's kernels are 4 lanes wide and LLVM's as wide as this host's
/// vectors.
#[cfg(all(feature = "llvm", target_arch = "x86_64"))]
#[test]
fn default_lanes_follow_the_backend_and_the_host() {
    let dir = scratch("default-lanes");
    let scene = repo("lang-examples/cornell_box.xml");
    let out = dir.join("x.exr").display().to_string();
    let host = if is_x86_feature_detected!("avx512f") {
        16
    } else if is_x86_feature_detected!("avx2") {
        8
    } else {
        4
    };
    for (backend, lanes) in [("cranelift", 4), ("llvm", host)] {
        let o = drsc(&[
            "render",
            &scene,
            "-o",
            &out,
            "-q",
            "--spp",
            "1",
            "-D",
            "resx=8",
            "-D",
            "resy=8",
            "--backend",
            backend,
        ]);
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        assert!(stdout(&o).contains(&format!("{backend} {lanes} lanes")), "{backend}: {}", stdout(&o));
    }
}
