//! Node kinds and field ids of the tree-sitter-go grammar, looked up once.
//!
//! The lowering dispatches on `node.kind_id()` through a table indexed by
//! kind id instead of comparing kind strings: every node of the tree passes
//! through that dispatch, and a string compare chain costs measurably more
//! than one array load.

use std::sync::OnceLock;
use tree_sitter::{Language, Node};

macro_rules! kinds {
    ($($variant:ident = $name:literal,)*) => {
        /// The named node kinds the lowering distinguishes. Everything else
        /// (comments, punctuation, kinds we never look at) is `Other`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum K {
            Other,
            Error,
            $($variant,)*
        }

        fn kind_of_name(name: &str) -> K {
            match name {
                "ERROR" => K::Error,
                $($name => K::$variant,)*
                _ => K::Other,
            }
        }
    };
}

kinds! {
    Comment = "comment",
    SourceFile = "source_file",
    PackageClause = "package_clause",
    ImportDeclaration = "import_declaration",
    ImportSpec = "import_spec",
    ImportSpecList = "import_spec_list",
    Dot = "dot",
    BlankIdentifier = "blank_identifier",
    FunctionDeclaration = "function_declaration",
    MethodDeclaration = "method_declaration",
    ParameterList = "parameter_list",
    ParameterDeclaration = "parameter_declaration",
    VariadicParameterDeclaration = "variadic_parameter_declaration",
    TypeParameterList = "type_parameter_list",
    TypeParameterDeclaration = "type_parameter_declaration",
    // Declarations.
    ConstDeclaration = "const_declaration",
    ConstSpec = "const_spec",
    VarDeclaration = "var_declaration",
    VarSpec = "var_spec",
    VarSpecList = "var_spec_list",
    TypeDeclaration = "type_declaration",
    TypeSpec = "type_spec",
    TypeAlias = "type_alias",
    // Statements.
    Block = "block",
    StatementList = "statement_list",
    ExpressionStatement = "expression_statement",
    SendStatement = "send_statement",
    ReceiveStatement = "receive_statement",
    IncStatement = "inc_statement",
    DecStatement = "dec_statement",
    AssignmentStatement = "assignment_statement",
    ShortVarDeclaration = "short_var_declaration",
    LabeledStatement = "labeled_statement",
    LabelName = "label_name",
    FallthroughStatement = "fallthrough_statement",
    BreakStatement = "break_statement",
    ContinueStatement = "continue_statement",
    GotoStatement = "goto_statement",
    ReturnStatement = "return_statement",
    GoStatement = "go_statement",
    DeferStatement = "defer_statement",
    IfStatement = "if_statement",
    ForStatement = "for_statement",
    ForClause = "for_clause",
    RangeClause = "range_clause",
    ExpressionSwitchStatement = "expression_switch_statement",
    ExpressionCase = "expression_case",
    DefaultCase = "default_case",
    TypeSwitchStatement = "type_switch_statement",
    TypeCase = "type_case",
    SelectStatement = "select_statement",
    CommunicationCase = "communication_case",
    EmptyStatement = "empty_statement",
    // Expressions.
    ExpressionList = "expression_list",
    ParenthesizedExpression = "parenthesized_expression",
    CallExpression = "call_expression",
    ArgumentList = "argument_list",
    VariadicArgument = "variadic_argument",
    SelectorExpression = "selector_expression",
    IndexExpression = "index_expression",
    SliceExpression = "slice_expression",
    TypeAssertionExpression = "type_assertion_expression",
    TypeConversionExpression = "type_conversion_expression",
    TypeInstantiationExpression = "type_instantiation_expression",
    CompositeLiteral = "composite_literal",
    LiteralValue = "literal_value",
    LiteralElement = "literal_element",
    KeyedElement = "keyed_element",
    FuncLiteral = "func_literal",
    UnaryExpression = "unary_expression",
    BinaryExpression = "binary_expression",
    Identifier = "identifier",
    FieldIdentifier = "field_identifier",
    PackageIdentifier = "package_identifier",
    TypeIdentifier = "type_identifier",
    RawStringLiteral = "raw_string_literal",
    InterpretedStringLiteral = "interpreted_string_literal",
    IntLiteral = "int_literal",
    FloatLiteral = "float_literal",
    ImaginaryLiteral = "imaginary_literal",
    RuneLiteral = "rune_literal",
    Nil = "nil",
    True = "true",
    False = "false",
    Iota = "iota",
    // Types.
    GenericType = "generic_type",
    QualifiedType = "qualified_type",
    PointerType = "pointer_type",
    ParenthesizedType = "parenthesized_type",
    StructType = "struct_type",
    InterfaceType = "interface_type",
    ArrayType = "array_type",
    ImplicitLengthArrayType = "implicit_length_array_type",
    SliceType = "slice_type",
    MapType = "map_type",
    ChannelType = "channel_type",
    FunctionType = "function_type",
    NegatedType = "negated_type",
    FieldDeclarationList = "field_declaration_list",
    FieldDeclaration = "field_declaration",
}

/// Field ids of the grammar (`child_by_field_id` arguments).
#[derive(Debug)]
pub struct Fields {
    pub alias: u16,
    pub alternative: u16,
    pub arguments: u16,
    pub body: u16,
    pub capacity: u16,
    pub channel: u16,
    pub communication: u16,
    pub condition: u16,
    pub consequence: u16,
    pub element: u16,
    pub end: u16,
    pub field: u16,
    pub function: u16,
    pub index: u16,
    pub initializer: u16,
    pub key: u16,
    pub left: u16,
    pub name: u16,
    pub operand: u16,
    pub operator: u16,
    pub package: u16,
    pub parameters: u16,
    pub path: u16,
    pub receiver: u16,
    pub result: u16,
    pub right: u16,
    pub start: u16,
    pub type_: u16,
    pub type_arguments: u16,
    pub type_parameters: u16,
    pub update: u16,
    pub value: u16,
}

/// Everything looked up once per process.
pub struct Grammar {
    pub language: Language,
    table: Vec<K>,
    pub f: Fields,
}

impl Grammar {
    pub fn get() -> &'static Grammar {
        static G: OnceLock<Grammar> = OnceLock::new();
        G.get_or_init(Grammar::new)
    }

    fn new() -> Grammar {
        let language: Language = tree_sitter_go::LANGUAGE.into();
        let count = language.node_kind_count();
        let mut table = vec![K::Other; count];
        for (id, slot) in table.iter_mut().enumerate() {
            let id = id as u16;
            if let Some(name) = language.node_kind_for_id(id) {
                // Anonymous tokens can share a name with a named node
                // (`nil`, `true`, `dot`'s "."); only named kinds count.
                if language.node_kind_is_named(id) || name == "ERROR" {
                    *slot = kind_of_name(name);
                }
            }
        }
        let field = |name: &str| -> u16 {
            // A missing field would mean a grammar mismatch; 0 never matches
            // any child, so lowering degrades instead of panicking.
            language.field_id_for_name(name).map_or(0, |f| f.get())
        };
        let f = Fields {
            alias: field("alias"),
            alternative: field("alternative"),
            arguments: field("arguments"),
            body: field("body"),
            capacity: field("capacity"),
            channel: field("channel"),
            communication: field("communication"),
            condition: field("condition"),
            consequence: field("consequence"),
            element: field("element"),
            end: field("end"),
            field: field("field"),
            function: field("function"),
            index: field("index"),
            initializer: field("initializer"),
            key: field("key"),
            left: field("left"),
            name: field("name"),
            operand: field("operand"),
            operator: field("operator"),
            package: field("package"),
            parameters: field("parameters"),
            path: field("path"),
            receiver: field("receiver"),
            result: field("result"),
            right: field("right"),
            start: field("start"),
            type_: field("type"),
            type_arguments: field("type_arguments"),
            type_parameters: field("type_parameters"),
            update: field("update"),
            value: field("value"),
        };
        Grammar { language, table, f }
    }

    /// The kind of a node. ERROR nodes map to [`K::Error`] whatever their id.
    #[inline]
    pub fn k(&self, node: Node) -> K {
        if node.is_error() {
            return K::Error;
        }
        self.table
            .get(node.kind_id() as usize)
            .copied()
            .unwrap_or(K::Other)
    }
}
