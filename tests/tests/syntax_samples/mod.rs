//! Shared by the parser round-trip and robustness tests: the `.drs` corpus on disk, embedded
//! sample programs that cover every syntax construct, and tree comparison ignoring positions.

#![allow(dead_code)]

use drs_diagnostics::{Diagnostic, FileId};
use drs_syntax::ast::SourceUnit;

pub use drs_tests::{drs_files_under, workspace_root};
use std::path::{Path, PathBuf};

/// The `.drs` files that must parse without errors: the stdlib, the language examples and the
/// valid ui tests.
pub fn valid_corpus() -> Vec<PathBuf> {
    let root = workspace_root();
    ["stdlib", "lang-examples", "tests/ui/valid"].iter().flat_map(|dir| drs_files_under(&root.join(dir))).collect()
}

/// `path` relative to the workspace root, for messages.
pub fn display(path: &Path) -> String {
    path.strip_prefix(workspace_root()).unwrap_or(path).display().to_string()
}

/// Parses `text` as file 0.
pub fn parse(text: &str) -> (SourceUnit, Vec<Diagnostic>) {
    drs_syntax::parse(text, FileId(0))
}

/// The `{:#?}` dump of a tree with spans (`@12..34`) and node ids (`#7`) removed, so that two
/// trees of the same program compare equal wherever their text sat.
pub fn shape(unit: &SourceUnit) -> String {
    strip_positions(&format!("{unit:#?}"))
}

/// Whether two trees are equal ignoring spans and node ids; `Err` shows the first differing
/// line of their [`shape`]s. (The one-line `{:?}` dump is compared first: for deep trees it is
/// much smaller than the indented one.)
pub fn same_tree(a: &SourceUnit, b: &SourceUnit) -> Result<(), String> {
    if strip_positions(&format!("{a:?}")) == strip_positions(&format!("{b:?}")) {
        return Ok(());
    }
    Err(first_difference(&shape(a), &shape(b)))
}

pub fn strip_positions(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'#' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            // `#\d+`
            i += 1;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            continue;
        }
        if c == b'@' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            // `@\d+\.\.\d+`
            let mut j = i + 1;
            while bytes.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            if bytes.get(j) == Some(&b'.') && bytes.get(j + 1) == Some(&b'.') {
                j += 2;
                let digits = j;
                while bytes.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
                if j > digits {
                    i = j;
                    continue;
                }
            }
        }
        // Copy one whole UTF-8 character.
        let len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + len]);
        i += len;
    }
    out
}

/// A first difference between two texts, for assertion messages.
pub fn first_difference(a: &str, b: &str) -> String {
    for (n, (la, lb)) in a.lines().zip(b.lines()).enumerate() {
        if la != lb {
            return format!("line {}:\n  left:  {la}\n  right: {lb}", n + 1);
        }
    }
    format!("one text is a prefix of the other ({} vs {} lines)", a.lines().count(), b.lines().count())
}

/// Hand-written programs that use every construct of the syntax tree, in tricky spellings
/// (parentheses the tree does not keep, statement-start rules, comments, trailing commas).
/// Each must parse without errors.
pub const SAMPLES: &[(&str, &str)] = &[
    ("imports_and_items", IMPORTS_AND_ITEMS),
    ("plugins", PLUGINS),
    ("expressions", EXPRESSIONS),
    ("statements", STATEMENTS),
    ("statement_start", STATEMENT_START),
    ("conditions", CONDITIONS),
    ("derivatives", DERIVATIVES),
    ("empty", ""),
    ("comments_only", "// nothing here\n/* nor here */\n"),
];

const IMPORTS_AND_ITEMS: &str = r#"
// Imports of every form.
import math;
import math::*;
import bsdfs::microfacet::{ggx_d, smith_g1,};
import a::b::c;
pub import prelude::*;
pub import frame::{Frame};
import empty::{};

extern type Sampler;
extern type Image;

extern fn sampler_next_1d(s: Sampler) -> f32;
extern fn image_fetch(img: Image, p: ivec2) -> vec4;

/* a block comment
   over several lines */
struct Frame {
    s: vec3,
    t: vec3,
    n: vec3, // trailing comma
}

struct Empty {}

struct Arrays { a: [f32; 4], b: [vec3; N], c: [[i32; 2]; 3], d: (f32, (bool, u32)), e: (f32,), f: () }

const N: i32 = 4;
const M: u32 = 0xFF_FFu;
const BITS: u32 = 0b1010_1010u;
const BIG: u32 = 4294967295u;
const NEG: i32 = -(2147483647i) - 1;
const F: f32 = 1_000.5e-3;
const G: f32 = 2E3;
const T: (f32, vec3) = (1.0, vec3(0.0, 1.0, 2.0));
const ARR: [f32; 3] = [1.0, 2.0, 3.0,];
const REP: [i32; N] = [0; N];
const C: Color = Color(0.5);

impl Frame {
    fn new(n: vec3) -> Frame {
        let s = normalize(cross(n, vec3(0.0, 0.0, 1.0)));
        Frame { s, t: cross(n, s), n }
    }

    @custom_fwd(frame_fwd)
    @custom_bwd(frame_bwd)
    fn to_local(self, v: vec3) -> vec3 {
        vec3(dot(v, self.s), dot(v, self.t), dot(v, self.n))
    }

    fn to_world(self, v: vec3) -> vec3 { self.s * v.x + self.t * v.y + self.n * v.z }
}

impl Sampler {
    extern fn next_2d(self) -> vec2;
}

impl Empty {}

fn nothing() {}
fn unit_ret() -> () { () }
fn generic_types(t: Texture<Color>, u: Texture<f32>, m: math::Frame) -> (Texture<f32>) { u }
fn attrs_on_params(@no_diff a: f32, @no_diff @other(x, 1, m::y) b: vec3, c: f32) -> f32 { a }
@attr_without_args
@with_args(a, m::b, 3)
fn attributed() {}
"#;

const PLUGINS: &str = r#"
import prelude::*;

interface bsdf {
    fn eval(si: SurfaceInteraction, wo: vec3) -> Color;
    fn sample(si: SurfaceInteraction, u: vec2) -> (vec3, Color, f32);
    fn pdf(si: SurfaceInteraction, wo: vec3) -> f32;
}

interface texture {}

bsdf Diffuse {
    param reflectance: Texture<Color> = 0.5;
    @no_diff param seed: u32 = 7u;
    param roughness: f32 = -0.25;
    param tint: Color = Color(1.0, 0.9, 0.8);
    param inner: Bsdf;

    fn eval(si: SurfaceInteraction, wo: vec3) -> Color {
        if wo.z <= 0.0 || si.wi.z <= 0.0 {
            return Color(0.0);
        }
        reflectance.eval(si) * INV_PI * wo.z
    }

    fn helper(x: f32) -> f32 { x * roughness }

    extern fn native(x: f32) -> f32;
}

emitter Area { param radiance: Texture<Color>; }

texture Checker {
    fn eval(si: SurfaceInteraction) -> f32 {
        let p = floor(si.uv * 8.0);
        select((i32(p.x) + i32(p.y)) % 2 == 0, 1.0, 0.0)
    }
}

integrator Path {
    param max_depth: i32 = 8;

    fn trace(ray: Ray) -> Color {
        var result = Color(0.0);
        var throughput: Color = 1.0;
        @max_iters(64)
        for depth in 0..max_depth {
            if throughput.r == 0.0 { break; }
            throughput *= 0.5;
            result += throughput;
        }
        result
    }
}

medium Fog {}
phase Iso {}
"#;

const EXPRESSIONS: &str = r#"
fn precedence(a: i32, b: i32, c: i32, d: bool, e: bool) -> i32 {
    let x0 = a + b * c;
    let x1 = (a + b) * c;
    let x2 = a - (b - c);
    let x3 = (a - b) - c;
    let x4 = a / (b / c) % (a * b);
    let x5 = a | b ^ c & a << b >> c;
    let x6 = ((a | b) ^ c) & (a << b);
    let x7 = (a << b) >> (c << a);
    let y0 = d || e && !d;
    let y1 = (d || e) && (d || !e);
    let y2 = (a < b) == (c >= a);
    let y3 = (a == b) != d;
    let y4 = a + 1 < b * 2 && b != c || !(a <= c);
    let y5 = (a & b) == 0 && (a | c) > 0;
    let z0 = -a * b;
    let z1 = -(a * b);
    let z2 = a - -b;
    let z3 = -(-a);
    let z4 = !!d;
    let z5 = !(a == b);
    let z6 = -a.x;
    let z7 = (-a).x;
    let z8 = (a + b).yx;
    let z9 = (!a)[0];
    x0 + x1
}

fn postfix(t: ((f32, f32), f32), v: vec4, m: mat4, arr: [vec3; 4]) -> f32 {
    let a = (t.0).1;
    let b = ((t.0).1);
    let c = (t.0).0 + t.1;
    let d = v.xyz.x + v.rgba.a + m[0][1] + arr[2].y;
    let e = arr[i32(v.x)].zyx.xy.y;
    let f = vec3(1.0).length();
    let g = Frame::new(v.xyz).to_local(v.xyz).z;
    let h = (1).0;
    let i = (1.5).x;
    let j = (2).min(3);
    let k = (a.f)(1.0);
    let l = (f(a))(b);
    let n = (arr[0])(1);
    let o = S { a: 1.0 }.a;
    let p = m::S { a }.a;
    let q = (a, b).0;
    let r = [a, b][1];
    let s = [0.0; N][0];
    a
}

fn literals() {
    let a = 0;
    let b = 1_000_000;
    let c = 0xDEAD_beefu;
    let d = 0b1u;
    let e = 7i;
    let f = 18446744073709551615u;
    let g = 1.0;
    let h = 0.5e-3;
    let i = 1e3;
    let j = 2.5E+10;
    let k = true;
    let l = false;
    let m = ();
    let n = (a,);
    let o = ((a, b),);
    let p = (a, (b, c), (d,), ());
    let q = [];
    let r = [1, 2, 3,];
    let s = [[1; 2]; 3];
    let t = [a; N];
    let u = [a; m::N];
    let v = Frame {};
    let w = Frame { s: a, t: b, n: c, };
    let x = Frame { s, t, n: -n };
    let y = m::Frame { s: s };
    let z = self;
}

fn block_like_values(c: bool) -> f32 {
    let a = if c { 1.0 } else { 2.0 };
    let b = if c { 1.0 } else if !c { 2.0 } else { 3.0 };
    let d = if c { let t = 1.0; t * 2.0 } else { 0.0 };
    let e = { let t = 2.0; t } + 1.0;
    let f = if c { 1.0 } else { 2.0 } * 3.0;
    let g = { 1.0 }.x;
    let h = loop { break; };
    let i = @max_iters(3) loop { break; };
    let j = while c {};
    let k = for i in 0..4 {};
    let l = if c { 1 } else { 2 } + if c { 3 } else { 4 };
    let m = -if c { 1.0 } else { 2.0 };
    let n = (if c { 1.0 } else { 2.0 }, { 3.0 });
    let o = f({ 1.0 }, if c { a } else { b });
    let p = if c { 1.0 } else { 2.0 }.x;
    let q = if c { f } else { g }(1.0);
    let r = {}[0];
    a
}
"#;

const STATEMENTS: &str = r#"
fn statements(n: i32) -> i32 {
    let a = 1;
    let b: i32 = 2;
    let (c, d) = (3, 4);
    let (e, (f, _)): (i32, (i32, f32)) = (5, (6, 7.0));
    let _ = 8;
    let (g,) = (9,);
    let () = ();
    var h;
    var i: i32;
    var j = 0;
    var k: f32 = 1.0;
    var (l, m) = (1, 2);
    h = 1;
    j += 1;
    j -= 1;
    j *= 2;
    j /= 2;
    j %= 3;
    v.xy = vec2(1.0, 2.0);
    s.f.g[0].x = 1.0;
    t[i][j] *= 2.0;
    f(a);
    a.b(c);
    x;
    ();
    (a, b);
    -a;
    !b;
    [1, 2];
    1;
    loop {
        if j > 10 { break; } else { continue; }
    }
    loop { break }
    while j < 100 { j += 1; }
    @max_iters(16) while j < 200 { j += 2; };
    for i in 0..n { j += i; }
    for i in 0u..10u {}
    for i in n - 1..n * 2 + 1 {}
    @max_iters(4)
    @other
    loop { return 1; }
    {
        let scoped = 1;
    }
    {}
    { 1 };
    if a < b {}
    if a < b {} else {}
    if a < b { 1; } else if a > b { 2; } else { 3; }
    if a < b {};
    return j;
}

fn tails() -> i32 { 1 }
fn tail_block() -> i32 { { 1 } }
fn tail_if(c: bool) -> i32 { if c { 1 } else { 2 } }
fn tail_loop() { loop {} }
fn tail_return() -> i32 { return 1 }
fn tail_bare_return() { return }
fn tail_break() { loop { break } }
fn tail_continue() { loop { continue } }
fn tail_after_stmts() -> i32 { let a = 1; if a > 0 {} a }
fn tail_if_after_if(c: bool) -> i32 { if c {} if c { 1 } else { 2 } }
fn only_stmt_if(c: bool) { if c {} }
fn return_values(c: bool) -> f32 {
    if c { return if c { 1.0 } else { 2.0 }; }
    return { 3.0 };
}
"#;

const STATEMENT_START: &str = r#"
fn statement_start(c: bool) -> f32 {
    (if c { a } else { b }).x;
    (if c { a } else { b })(x);
    ({ a }) + 1;
    ({ a }).x = 2;
    (loop {}).0 = 1;
    (while c {}) == ();
    (if c { a } else { b }).y += 1.0;
    ({ s })[0] = 1;
    (if c { 1 } else { 2 }) - 1;
    -{ a };
    !if c { true } else { false };
    if c {}
    -x;
    if c {}
    (a, b);
    {}
    [1][0];
    loop { break; }
    (x);
    ({ 1.0 }) * 2.0
}

fn tail_needs_parens(c: bool) -> f32 { (if c { 1.0 } else { 2.0 }) + 3.0 }
fn tail_method(c: bool) -> f32 { (if c { v } else { w }).length() }
fn tail_index() -> f32 { ({ v })[0] }
"#;

const CONDITIONS: &str = r#"
fn conditions(s: S, n: i32) {
    if (S { a: 1 }).a == 1 {}
    if s == (S { a: 1 }) {}
    if f(S { a: 1 }) {}
    if [S { a: 1 }][0].a == 1 {}
    if (S {}).ok {} else if (S {}).ok2 {}
    while -(S { a: 1.0 }).a < 0.0 {}
    while (S { a: 1 }).a == n && (T {}).b {}
    for i in (S { n }).n..(T { m: n }).m {}
    for i in f(S { n })..g[S { n }.n] {}
    for i in 0..n { for j in i..n {} }
    if if c { a } else { b } {}
    if { c } {}
    while { let t = c; t } {}
    if a.b && c::d {}
    if x.0 == y.1 {}
    for i in t.0..t.1 {}
    for i in 1..2 {}
}
"#;

const DERIVATIVES: &str = r#"
fn f(x: f32, @no_diff k: i32, v: vec3) -> f32 { x * f32(k) + v.x }

fn uses(x: f32) -> f32 {
    let (y, dy) = fwd_diff(f)(x, 2, vec3(1.0), 1.0, vec3(0.0));
    let (dx, dv) = bwd_diff(f)(x, 2, vec3(1.0), 1.0);
    let g = fwd_diff(math::sqr)(x, 1.0);
    let h = bwd_diff(Frame::to_local)(fr, v, dy).x;
    let d = detach(x) + replace_grad(x, y);
    let r = fwd_diff(f);
    y + dy
}

@custom_fwd(f_fwd)
fn g(x: f32) -> f32 { x }
fn f_fwd(x: f32, dx: f32) -> (f32, f32) { (x, dx) }
"#;
