//! Local arrays and loop bounds: what the verifier accepts and rejects, and how they print.

use drs_ir::*;

/// `fn tape(x: f32, i: u32) -> (f32)` with `L0: [f32; 4]`: stores `x` at `i` inside a loop
/// bounded by `@max_iters(3)`, then loads element `i`.
fn tape() -> Module {
    let mut module = Module::default();
    let mut f = Function::new("tape");
    let x = f.add_param("x", Ty::F32);
    let i = f.add_param("i", Ty::U32);
    f.result_types = vec![Ty::F32];
    let array = f.add_local(Ty::F32, 4);
    let sigs = Signatures::default();
    let mut b = Builder::new(&mut f, &sigs);
    let zero = b.u32(0);
    b.bounded_loop(vec![zero], Some(3), |b, c| {
        b.local_store(array, i, x);
        let one = b.u32(1);
        let next = b.add(c[0], one);
        let three = b.u32(3);
        let more = b.cmp(CmpOp::Lt, next, three);
        (more, vec![next])
    });
    let y = b.local_load(array, i);
    b.finish(vec![y]);
    module.add_function(f);
    module
}

/// The instructions of the body of the first function.
fn insts(module: &mut Module) -> &mut Vec<Inst> {
    &mut module.functions[0].body.insts
}

fn rejected(module: &Module, needle: &str) {
    match verify_module(module) {
        Ok(()) => panic!("accepted:\n{}", print_module(module)),
        Err(e) => assert!(e.message.contains(needle), "`{}` does not mention `{needle}`", e.message),
    }
}

#[test]
fn well_formed_local_arrays_verify() {
    let module = tape();
    verify_module(&module).unwrap();
    assert_eq!(module.functions[0].locals, vec![LocalArray { elem: Ty::F32, len: 4 }]);
}

#[test]
fn an_unknown_array_is_rejected() {
    let mut m = tape();
    let load = insts(&mut m).last_mut().unwrap();
    load.op = Op::LocalLoad { array: 1, index: Value(1) };
    rejected(&m, "unknown local array 1");
}

#[test]
fn a_non_u32_index_is_rejected() {
    let mut m = tape();
    // %0 is the f32 parameter.
    insts(&mut m).last_mut().unwrap().op = Op::LocalLoad { array: 0, index: Value(0) };
    rejected(&m, "local load index");
}

#[test]
fn a_value_of_another_type_is_rejected() {
    let mut m = tape();
    let Op::Loop { body, .. } = &mut insts(&mut m)[1].op else { panic!("the loop is second") };
    // Store the u32 index as the value.
    body.insts[0].op = Op::LocalStore { array: 0, index: Value(1), value: Value(1) };
    rejected(&m, "value stored in a local array");
}

#[test]
fn a_load_result_of_another_type_is_rejected() {
    let mut m = tape();
    let r = insts(&mut m).last().unwrap().results[0];
    m.functions[0].value_types[r.0 as usize] = Ty::I32;
    rejected(&m, "has type i32 but f32 is produced");
}

#[test]
fn a_zero_loop_bound_is_rejected() {
    let mut m = tape();
    let Op::Loop { max_iters, .. } = &mut insts(&mut m)[1].op else { panic!("the loop is second") };
    *max_iters = Some(0);
    rejected(&m, "max_iters");
}

#[test]
fn arrays_belong_to_their_function() {
    // A second function without arrays may not use the first one's array 0.
    let mut m = tape();
    let mut g = Function::new("other");
    let i = g.add_param("i", Ty::U32);
    g.result_types = vec![Ty::F32];
    let r = g.new_value(Ty::F32);
    g.body = Region {
        params: vec![],
        insts: vec![Inst { results: vec![r], op: Op::LocalLoad { array: 0, index: i } }],
        yields: vec![r],
    };
    m.add_function(g);
    rejected(&m, "unknown local array 0");
}

#[test]
fn locals_and_bounds_print() {
    let module = tape();
    let text = print_module(&module);
    let expected = "\
fn tape(%0 x: f32, %1 i: u32) -> (f32) locals(L0: [f32; 4]) {
    %2: u32 = const 0u
    %8: u32 = loop (%2) |%3| max_iters 3 {
        local_store L0[%1], %0
        %4: u32 = const 1u
        %5: u32 = add %3, %4
        %6: u32 = const 3u
        %7: bool = cmp.lt %5, %6
        yield %7, %5
    }
    %9: f32 = local_load L0[%1]
    return %9
}
";
    assert_eq!(text, expected);
}
