/// Declares the error codes with their stable number and a one-line title. The numbers are part
/// of the language's interface (tools match on them, `spec/errors.md` documents each one): a
/// code is never renumbered or reused, only added.
macro_rules! codes {
    ($($variant:ident = $num:literal, $title:literal;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable code as printed, e.g. `E0200`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $num,)* }
            }

            /// A short description of the class of error.
            pub fn title(self) -> &'static str {
                match self { $(Code::$variant => $title,)* }
            }
        }
    };
}

codes! {
    // Lexical and syntax errors.
    InvalidToken = "E0001", "invalid character";
    UnterminatedComment = "E0002", "unterminated block comment";
    InvalidLiteral = "E0003", "invalid number literal";
    UnexpectedToken = "E0004", "unexpected token";
    UnexpectedEof = "E0005", "unexpected end of file";
    InvalidPluginMember = "E0006", "invalid plugin member";

    // Names, modules and imports.
    UnknownName = "E0100", "unknown name";
    UnknownType = "E0101", "unknown type";
    DuplicateDefinition = "E0102", "duplicate definition";
    UnknownModule = "E0103", "unknown module";
    UnknownImport = "E0104", "name not found in module";
    UnknownField = "E0105", "unknown field";
    UnknownMethod = "E0106", "unknown method";
    UnknownPluginKind = "E0107", "unknown plugin kind";
    AmbiguousName = "E0108", "ambiguous name";
    WrongKindOfName = "E0109", "name used as the wrong kind of thing";

    // Types.
    TypeMismatch = "E0200", "mismatched types";
    IntFloatMix = "E0201", "integer and float mixed";
    ArgumentCount = "E0202", "wrong number of arguments";
    InvalidOperands = "E0203", "operator cannot be applied to these types";
    InvalidSwizzle = "E0204", "invalid swizzle";
    NotCallable = "E0205", "not callable";
    InvalidIndex = "E0206", "invalid index";
    NonBoolCondition = "E0207", "condition is not bool";
    CannotInferType = "E0208", "type cannot be inferred";
    InvalidConstructor = "E0209", "invalid constructor arguments";
    InvalidTupleIndex = "E0210", "invalid tuple index";
    InvalidArrayLength = "E0211", "invalid array length";
    StructLiteralFields = "E0212", "wrong fields in struct literal";
    LiteralOutOfRange = "E0213", "literal out of range";
    InvalidConversion = "E0214", "invalid conversion";
    BreakOutsideLoop = "E0215", "break or continue outside a loop";
    PatternMismatch = "E0216", "pattern does not match the type";
    NotConstant = "E0217", "not a constant expression";
    InvalidRange = "E0218", "invalid range";
    InvalidTensorUse = "E0219", "invalid use of a tensor";

    // Mutability and control flow.
    AssignToImmutable = "E0300", "assignment to an immutable binding";
    UseOfUnassigned = "E0301", "use of a possibly unassigned variable";
    MissingReturn = "E0302", "missing return value";
    UnreachableCode = "E0303", "unreachable code";
    Recursion = "E0304", "recursive call";
    InvalidAssignTarget = "E0305", "invalid assignment target";

    // Plugins, interfaces and declarations.
    MissingInterfaceMethod = "E0400", "missing interface method";
    InterfaceSignatureMismatch = "E0401", "method does not match the interface";
    NoInterfaceForKind = "E0402", "no interface declared for plugin kind";
    InvalidParamType = "E0403", "invalid plugin parameter type";
    MissingBody = "E0404", "function without a body";
    UnexpectedBody = "E0405", "declaration may not have a body";
    InvalidSelf = "E0406", "invalid use of self";

    // Attributes and derivatives.
    UnknownAttribute = "E0500", "unknown attribute";
    MisplacedAttribute = "E0501", "attribute not allowed here";
    AttributeArguments = "E0502", "wrong attribute arguments";
    CustomDerivativeSignature = "E0503", "custom derivative has the wrong signature";
    NotDifferentiable = "E0504", "not differentiable";
    DerivativeNotCalled = "E0505", "derivative function not called";
    DuplicateAttribute = "E0506", "duplicate attribute";
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for code in Code::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "{s} used twice");
            assert!(s.len() == 5 && s.starts_with('E') && s[1..].chars().all(|c| c.is_ascii_digit()));
        }
    }
}
