//! Builds the Rust plan from the spec produced by `polycodec._plan.compile_spec`.
//!
//! The spec is trusted to be well-formed (it comes from our own Python code), but every read is
//! still checked, so a bug there becomes a clear TypeError rather than a panic.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::constraints::{DecimalBounds, FloatBounds, IntBounds, LengthBounds};
use super::*;

/// Builds a plan from `(nodes, root)` as returned by `compile_spec`.
pub fn build_plan(spec: &Bound<'_, PyAny>) -> PyResult<Plan> {
    let (nodes, root): (Bound<'_, PyList>, usize) = spec.extract()?;
    let mut built = Vec::with_capacity(nodes.len());
    for entry in nodes.iter() {
        let (kind, data): (String, Bound<'_, PyDict>) = entry.extract()?;
        built.push(build_node(&kind, &data)?);
    }
    let any = built.len();
    built.push(Node::Any);
    let has_raw = built.iter().any(|node| matches!(node, Node::Raw { .. }));
    let reads_node_first = has_raw || built.iter().any(|node| matches!(node, Node::Extension(_)));
    let has_unset = built.iter().any(|node| match node {
        Node::Record(spec) => spec.fields.iter().any(|field| field.unset),
        node => matches!(node, Node::Unset),
    });
    let unset = if has_unset {
        Some(spec.py().import("polycodec")?.getattr("UNSET")?.unbind())
    } else {
        None
    };
    let mut plan = Plan {
        nodes: built,
        root,
        any,
        reads_node_first,
        has_raw,
        unset,
        decode_is_pure: false,
        compile_options: None,
        subclasses: Default::default(),
    };
    validate_indices(&plan)?;
    resolve_unions(&mut plan);
    resolve_tagged_union_keys(&mut plan);
    resolve_plain_rules(&mut plan);
    resolve_fixed_tags(&mut plan);
    direct::resolve_direct_fields(&mut plan);
    plan.decode_is_pure = decode_is_pure(spec.py(), &plan)?;
    Ok(plan)
}

fn build_node(kind: &str, data: &Bound<'_, PyDict>) -> PyResult<Node> {
    Ok(match kind {
        "any" => Node::Any,
        "none" => Node::None,
        "unset" => Node::Unset,
        "raw" => Node::Raw {
            nullable: get_bool(data, "nullable")?,
        },
        "bool" => Node::Bool,
        "int" => Node::Int(IntBounds {
            ge: int_bound(data, "ge")?,
            gt: int_bound(data, "gt")?,
            le: int_bound(data, "le")?,
            lt: int_bound(data, "lt")?,
            multiple_of: int_bound(data, "multiple_of")?,
        }),
        "float" => Node::Float(FloatBounds {
            ge: get_opt(data, "ge")?,
            gt: get_opt(data, "gt")?,
            le: get_opt(data, "le")?,
            lt: get_opt(data, "lt")?,
            multiple_of: get_opt(data, "multiple_of")?,
        }),
        "str" => Node::Str(StrSpec {
            length: length_bounds(data)?,
            pattern: get_object(data, "pattern")?,
        }),
        "bytes" => {
            let cls = get_required(data, "cls")?;
            let py = cls.py();
            let class = if cls.is(py.get_type::<pyo3::types::PyByteArray>()) {
                BytesClass::ByteArray
            } else if cls.is(py.get_type::<pyo3::types::PyMemoryView>()) {
                BytesClass::MemoryView
            } else {
                BytesClass::Bytes
            };
            Node::Bytes(BytesSpec {
                class,
                length: length_bounds(data)?,
            })
        }
        "decimal" => Node::Decimal(DecimalSpec {
            max_digits: get_opt(data, "max_digits")?,
            decimal_places: get_opt(data, "decimal_places")?,
            bounds: DecimalBounds {
                ge: get_object(data, "ge")?,
                gt: get_object(data, "gt")?,
                le: get_object(data, "le")?,
                lt: get_object(data, "lt")?,
            },
        }),
        "datetime" => Node::DateTime(tz_rule(data)?),
        "date" => Node::Date,
        "time" => Node::Time(tz_rule(data)?),
        "timedelta" => Node::TimeDelta,
        "uuid" => Node::Uuid,
        "enum" => build_enum(data)?,
        "literal" => {
            let values = get_list(data, "values")?;
            let mut out = Vec::with_capacity(values.len());
            for value in values {
                out.push((literal_value(&value)?, value.unbind()));
            }
            Node::Literal(LiteralSpec { values: out })
        }
        "union" => Node::Union(UnionSpec {
            variants: get_ids(data, "variants")?,
            none: None,
            bool: None,
            int: None,
            float: None,
            str: None,
            array: None,
            object: None,
            records: Vec::new(),
        }),
        "tagged_union" => {
            let entries = get_list(data, "tags")?;
            let mut tags = Vec::with_capacity(entries.len());
            for entry in entries {
                let (value, id): (Bound<'_, PyAny>, usize) = entry.extract()?;
                tags.push((literal_value(&value)?, id));
            }
            Node::TaggedUnion(TaggedUnionSpec {
                tag_field: get_string(data, "tag_field")?,
                tags,
                keys: Vec::new(),
                classes: Vec::new(),
            })
        }
        "list" | "set" | "frozenset" | "var_tuple" => Node::Sequence(SequenceSpec {
            kind: match kind {
                "list" => SequenceKind::List,
                "set" => SequenceKind::Set,
                "frozenset" => SequenceKind::FrozenSet,
                _ => SequenceKind::VarTuple,
            },
            item: get_id(data, "item")?,
            length: length_bounds(data)?,
            plain: None,
        }),
        "tuple" => Node::Tuple(get_ids(data, "items")?),
        "dict" => Node::Dict(DictSpec {
            key: get_id(data, "key")?,
            value: get_id(data, "value")?,
            length: length_bounds(data)?,
            plain: None,
            str_keys: false,
        }),
        "dataclass" => build_record(RecordKind::Dataclass, data)?,
        "typeddict" => build_record(RecordKind::TypedDict, data)?,
        "namedtuple" => build_record(RecordKind::NamedTuple, data)?,
        "extension" => Node::Extension(ExtensionSpec {
            cls: get_required(data, "cls")?.unbind(),
            name: get_string(data, "name")?,
            wire: get_id(data, "wire")?,
            encode: get_required(data, "encode")?.unbind(),
            decode: get_required(data, "decode")?.unbind(),
            nullable: get_bool(data, "nullable")?,
        }),
        other => {
            return Err(PyTypeError::new_err(format!(
                "polycodec internal error: unknown plan node kind {other:?}"
            )))
        }
    })
}

fn build_enum(data: &Bound<'_, PyDict>) -> PyResult<Node> {
    let cls = get_required(data, "cls")?;
    let members = get_list(data, "members")?;
    let values = get_list(data, "values")?;
    let names = get_list(data, "names")?;
    let mut out = Vec::with_capacity(members.len());
    for ((member, value), name) in members.into_iter().zip(values).zip(names) {
        let name: String = name.extract()?;
        let value_object = value.clone().unbind();
        let value = literal_value(&value).map_err(|_| {
            PyTypeError::new_err(format!(
                "polycodec cannot handle enum {}: member {member} has a value that is not a str or int",
                cls.getattr("__qualname__").map(|q| q.to_string()).unwrap_or_default()
            ))
        })?;
        out.push(EnumMember {
            member: member.unbind(),
            name,
            value,
            value_object,
        });
    }
    Ok(Node::Enum(EnumSpec {
        name: cls.getattr("__qualname__")?.extract()?,
        module: cls.getattr("__module__")?.extract()?,
        cls: cls.unbind(),
        members: out,
        flag: get_bool(data, "flag")?,
    }))
}

fn build_record(kind: RecordKind, data: &Bound<'_, PyDict>) -> PyResult<Node> {
    let py = data.py();
    let cls = get_required(data, "cls")?;
    let nodefault = py.import("polycodec._plan")?.getattr("NODEFAULT")?;
    let field_specs = get_list(data, "fields")?;
    let mut fields = Vec::with_capacity(field_specs.len());
    let mut field_aliases: Vec<Vec<String>> = Vec::with_capacity(field_specs.len());
    for spec in field_specs {
        let spec = &spec.cast_into::<PyDict>()?;
        let name = get_string(spec, "name")?;
        let wire_name = get_string(spec, "wire_name")?;
        let default_value = get_required(spec, "default")?;
        let factory = get_object(spec, "default_factory")?;
        let required = get_bool(spec, "required")?;
        let unset = get_bool(spec, "unset")?;
        let default = if let Some(factory) = factory {
            FieldDefault::Factory(factory)
        } else if !default_value.is(&nodefault) {
            FieldDefault::Value(default_value.unbind())
        } else if required {
            FieldDefault::Required
        } else {
            FieldDefault::Absent
        };
        fields.push(Field {
            name: PyString::intern(py, &name).unbind(),
            wire_key: PyString::intern(py, &wire_name).unbind(),
            wire_name,
            node: get_id(spec, "type")?,
            default,
            on_wire: get_bool(spec, "wire")?,
            plain: None,
            unset,
            omit: DefaultTest::Never,
        });
        field_aliases.push(get_strings(spec, "aliases")?);
    }
    let tag = match get_object(data, "tag")? {
        Some(tag) => {
            let (index, value): (usize, Bound<'_, PyAny>) = tag.bind(py).extract()?;
            Some((index, literal_value(&value)?))
        }
        None => None,
    };
    let wire_fields = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.on_wire)
        .map(|(i, _)| i)
        .collect::<Vec<_>>();
    let wire_order = wire_fields.iter().map(|&i| (i, fields[i].node)).collect();
    let aliases: Vec<(String, usize)> = wire_fields
        .iter()
        .enumerate()
        .flat_map(|(position, &index)| {
            field_aliases[index]
                .iter()
                .map(move |alias| (alias.clone(), position))
        })
        .collect();
    let class_tag = match get_object(data, "class_tag")? {
        Some(tag) => {
            let (wire_name, value, node): (String, Bound<'_, PyAny>, usize) =
                tag.bind(py).extract()?;
            let key = PyString::intern(py, &wire_name).unbind();
            Some(ClassTag {
                field: Field {
                    name: key.clone_ref(py),
                    wire_key: key,
                    wire_name,
                    node,
                    default: FieldDefault::Required,
                    on_wire: true,
                    plain: None,
                    unset: false,
                    omit: DefaultTest::Never,
                },
                value: literal_value(&value)?,
            })
        }
        None => None,
    };
    let has_unset = fields.iter().any(|field| field.unset);
    let array_like = get_bool(data, "array_like")?;
    let omit_defaults = get_bool(data, "omit_defaults")?;
    let plain_map = kind == RecordKind::Dataclass && !array_like && !omit_defaults && !has_unset;
    let common_map = plain_map && class_tag.is_none();
    let class_map = plain_map && class_tag.is_some();
    let layout = if plain_map {
        RecordLayout::Full
    } else if array_like || kind == RecordKind::NamedTuple {
        if kind == RecordKind::TypedDict {
            RecordLayout::General
        } else {
            RecordLayout::Array
        }
    } else {
        RecordLayout::Sparse
    };
    if omit_defaults && !array_like && kind != RecordKind::NamedTuple {
        let tag_index = tag.as_ref().map(|(index, _)| *index);
        for (index, field) in fields.iter_mut().enumerate() {
            if Some(index) == tag_index {
                continue;
            }
            field.omit = match &field.default {
                FieldDefault::Value(value) => DefaultTest::of_value(value.bind(py))?,
                FieldDefault::Factory(factory) => DefaultTest::of_factory(factory.bind(py)),
                FieldDefault::Required | FieldDefault::Absent => DefaultTest::Never,
            };
        }
    }
    let other_names = (class_tag.is_some() || !aliases.is_empty())
        .then(|| Box::new(OtherNames { class_tag, aliases }));
    let before_fill = get_object(data, "before_fill")?;
    let user_setattr = kind == RecordKind::Dataclass
        && (before_fill.is_some() || has_python_descriptor(&cls, &fields)?);
    let tuple_new = kind == RecordKind::NamedTuple && makes_tuples_directly(&cls)?;
    let dict_template = if kind == RecordKind::TypedDict {
        let keys: Vec<Bound<'_, PyString>> =
            fields.iter().map(|f| f.name.bind(py).clone()).collect();
        crate::py::cpython::dict_template(py, &keys)
    } else {
        None
    };
    let names: Vec<Py<PyString>> = fields.iter().map(|f| f.name.clone_ref(py)).collect();
    let access = FieldAccess::for_class(kind, &cls, &names)?;
    let fills = fields
        .iter()
        .map(|field| fill_of(py, &field.default))
        .collect();
    Ok(Node::Record(RecordSpec {
        kind,
        type_addr: cls.as_ptr() as usize,
        qualname: get_string(data, "name")?,
        module: get_string(data, "module")?,
        cls: cls.unbind(),
        fields,
        post_init: get_bool(data, "post_init")?,
        before_fill,
        after_fill: get_object(data, "after_fill")?,
        user_setattr,
        tuple_new,
        dict_template,
        frozen: get_bool(data, "frozen")?,
        slots: get_bool(data, "slots")?,
        access,
        forbid_unknown_fields: get_bool(data, "forbid_unknown_fields")?,
        omit_defaults,
        array_like,
        tag,
        other_names,
        common_map,
        class_map,
        layout,
        fixed_tag: false,
        wire_fields,
        wire_order,
        direct: Box::default(),
        fills,
    }))
}

/// How a field with this default is filled when the input leaves it out (see [`Fill`]).
fn fill_of(py: Python<'_>, default: &FieldDefault) -> Fill {
    match default {
        FieldDefault::Required => Fill::Required,
        FieldDefault::Absent => Fill::Absent,
        FieldDefault::Value(_) => Fill::Shared,
        FieldDefault::Factory(factory) => {
            let factory = factory.bind(py);
            if factory.is(py.get_type::<pyo3::types::PyList>()) {
                Fill::EmptyList
            } else if factory.is(py.get_type::<pyo3::types::PyDict>()) {
                Fill::EmptyDict
            } else if factory.is(py.get_type::<pyo3::types::PySet>()) {
                Fill::EmptySet
            } else {
                Fill::Call
            }
        }
    }
}

/// Whether named tuple class `cls` makes an instance with nothing but `tuple.__new__(cls,
/// fields)`: its `__new__` is the function `collections.namedtuple` generates (made in a
/// namespace whose `_tuple_new` is `tuple.__new__`; a subclass that defines its own is not),
/// and no `__init__` runs after it (it is `object.__init__`).
fn makes_tuples_directly(cls: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = cls.py();
    let builtins = py.import("builtins")?;
    let tuple_new = builtins.getattr("tuple")?.getattr("__new__")?;
    let object_init = builtins.getattr("object")?.getattr("__init__")?;
    if !cls.getattr("__init__")?.is(&object_init) {
        return Ok(false);
    }
    let Ok(globals) = cls.getattr("__new__")?.getattr("__globals__") else {
        return Ok(false);
    };
    let Ok(globals) = globals.cast::<PyDict>() else {
        return Ok(false);
    };
    Ok(globals
        .get_item("_tuple_new")?
        .is_some_and(|found| found.is(&tuple_new)))
}

/// Whether a field of the class is set through a data descriptor other than a slot's member
/// descriptor (a descriptor-typed dataclass field, a property).
fn has_python_descriptor(cls: &Bound<'_, PyAny>, fields: &[Field]) -> PyResult<bool> {
    let py = cls.py();
    let mro = cls.getattr("__mro__")?;
    for field in fields {
        let name = field.name.bind(py);
        for klass in mro.try_iter()? {
            let found = klass?.getattr("__dict__")?.get_item(name).ok();
            let Some(found) = found else { continue };
            let descriptor_type = found.get_type();
            // A slot's member descriptor is C; a property's setter or any other descriptor
            // with `__set__` runs Python code.
            let member = descriptor_type.qualname()? == "member_descriptor"
                && descriptor_type.module()? == "builtins";
            if !member && descriptor_type.hasattr("__set__")? {
                return Ok(true);
            }
            break;
        }
    }
    Ok(false)
}

/// Fills each union's per-token dispatch and checks every index is in range.
fn validate_indices(plan: &Plan) -> PyResult<()> {
    let count = plan.nodes.len();
    let check = |id: NodeId| -> PyResult<()> {
        if id < count {
            Ok(())
        } else {
            Err(PyTypeError::new_err(format!(
                "polycodec internal error: plan node index {id} out of range"
            )))
        }
    };
    check(plan.root)?;
    for node in &plan.nodes {
        match node {
            Node::Union(spec) => spec.variants.iter().try_for_each(|&id| check(id))?,
            Node::TaggedUnion(spec) => spec.tags.iter().try_for_each(|(_, id)| check(*id))?,
            Node::Sequence(spec) => check(spec.item)?,
            Node::Tuple(items) => items.iter().try_for_each(|&id| check(id))?,
            Node::Dict(spec) => {
                check(spec.key)?;
                check(spec.value)?
            }
            Node::Record(spec) => {
                spec.fields.iter().try_for_each(|f| check(f.node))?;
                if let Some(tag) = spec.class_tag() {
                    check(tag.field.node)?;
                }
            }
            Node::Extension(spec) => check(spec.wire)?,
            _ => {}
        }
    }
    Ok(())
}

/// Each record field's plain scalar kind, once the union nodes it may point at are final.
fn resolve_plain_rules(plan: &mut Plan) {
    for id in 0..plan.nodes.len() {
        let (rule, str_keys) = match &plan.nodes[id] {
            Node::Sequence(spec) => (PlainRule::for_node(plan, spec.item), false),
            Node::Dict(spec) => (
                PlainRule::for_node(plan, spec.value),
                matches!(plan.nodes[spec.key], Node::Str(_) | Node::Any),
            ),
            _ => (None, false),
        };
        match &mut plan.nodes[id] {
            Node::Sequence(spec) => spec.plain = rule,
            Node::Dict(spec) => {
                spec.plain = rule;
                spec.str_keys = str_keys;
            }
            _ => {}
        }
        let rules: Vec<Option<PlainRule>> = match &plan.nodes[id] {
            Node::Record(spec) => spec
                .fields
                .iter()
                .map(|field| PlainRule::for_node(plan, field.node))
                .collect(),
            _ => continue,
        };
        if let Node::Record(spec) = &mut plan.nodes[id] {
            for (field, rule) in spec.fields.iter_mut().zip(rules) {
                field.plain = rule;
            }
        }
    }
}

/// Marks each tagged record whose tag field's `Literal` allows exactly the class's tag: every
/// instance then writes the same tag entry, which byte formats precompute per codec (see
/// `Encoder::leading_tag`) and only check against the instance's field.
fn resolve_fixed_tags(plan: &mut Plan) {
    for id in 0..plan.nodes.len() {
        let fixed = match &plan.nodes[id] {
            // A class tag is always the class's own.
            Node::Record(spec) if spec.class_tag().is_some() => true,
            Node::Record(spec) => spec.tag.as_ref().is_some_and(|(index, tag)| {
                matches!(
                    plan.nodes.get(spec.fields[*index].node),
                    Some(Node::Literal(literal))
                        if matches!(literal.values.as_slice(), [(only, _)] if only == tag)
                )
            }),
            _ => continue,
        };
        if let Node::Record(spec) = &mut plan.nodes[id] {
            spec.fixed_tag = fixed;
        }
    }
}

/// Lists, for every tagged union, the field names of its variants and whether one node decodes
/// each of them in every variant.
fn resolve_tagged_union_keys(plan: &mut Plan) {
    let mut all_keys = Vec::new();
    for node in &plan.nodes {
        let Node::TaggedUnion(spec) = node else {
            all_keys.push(Vec::new());
            continue;
        };
        let mut keys: Vec<UnionKey> = Vec::new();
        let mut conflicting: Vec<bool> = Vec::new();
        for (_, variant) in &spec.tags {
            let Node::Record(record) = &plan.nodes[*variant] else {
                continue;
            };
            // Each field by its wire name, and by each of its aliases.
            let names = record
                .wire_fields
                .iter()
                .map(|&index| (record.fields[index].wire_name.as_str(), index))
                .chain(
                    record
                        .aliases()
                        .iter()
                        .map(|(alias, position)| (alias.as_str(), record.wire_fields[*position])),
                );
            for (name, index) in names {
                let field = &record.fields[index];
                if name == spec.tag_field {
                    continue;
                }
                match keys.iter().position(|k| k.wire_name == name) {
                    Some(at) => {
                        let same = keys[at]
                            .shared
                            .is_some_and(|seen| decodes_alike(plan, seen, field.node, 0));
                        if !same {
                            conflicting[at] = true;
                        }
                    }
                    None => {
                        keys.push(UnionKey {
                            wire_name: name.to_owned(),
                            shared: Some(field.node),
                        });
                        conflicting.push(false);
                    }
                }
            }
        }
        for (key, conflict) in keys.iter_mut().zip(conflicting) {
            if conflict {
                key.shared = None;
            }
        }
        all_keys.push(keys);
    }
    let all_classes: Vec<Vec<(usize, NodeId)>> = plan
        .nodes
        .iter()
        .map(|node| match node {
            Node::TaggedUnion(spec) => {
                let mut classes: Vec<(usize, NodeId)> = Vec::new();
                for &(_, id) in &spec.tags {
                    if let Node::Record(record) = &plan.nodes[id] {
                        if !classes.iter().any(|&(_, seen)| seen == id) {
                            classes.push((record.type_addr, id));
                        }
                    }
                }
                classes
            }
            _ => Vec::new(),
        })
        .collect();
    for ((node, keys), classes) in plan.nodes.iter_mut().zip(all_keys).zip(all_classes) {
        if let Node::TaggedUnion(spec) = node {
            spec.keys = keys;
            spec.classes = classes;
        }
    }
}

/// Whether two nodes turn the same wire value into the same Python value: the same node, or
/// structurally equal ones (each class annotation of `str` gets its own node).
fn decodes_alike(plan: &Plan, a: NodeId, b: NodeId, depth: usize) -> bool {
    if a == b {
        return true;
    }
    if depth > 8 {
        return false;
    }
    let alike = |x: NodeId, y: NodeId| decodes_alike(plan, x, y, depth + 1);
    match (&plan.nodes[a], &plan.nodes[b]) {
        (Node::Any, Node::Any)
        | (Node::None, Node::None)
        | (Node::Bool, Node::Bool)
        | (Node::Date, Node::Date)
        | (Node::TimeDelta, Node::TimeDelta)
        | (Node::Uuid, Node::Uuid) => true,
        (Node::Int(x), Node::Int(y)) => x == y,
        (Node::Float(x), Node::Float(y)) => x == y,
        (Node::Str(x), Node::Str(y)) => x.is_unconstrained() && y.is_unconstrained(),
        (Node::DateTime(x), Node::DateTime(y)) | (Node::Time(x), Node::Time(y)) => x == y,
        (Node::Union(x), Node::Union(y)) => {
            x.variants.len() == y.variants.len()
                && x.variants
                    .iter()
                    .zip(&y.variants)
                    .all(|(&p, &q)| alike(p, q))
        }
        (Node::Sequence(x), Node::Sequence(y)) => {
            x.kind == y.kind && x.length == y.length && alike(x.item, y.item)
        }
        (Node::Dict(x), Node::Dict(y)) => {
            x.length == y.length && alike(x.key, y.key) && alike(x.value, y.value)
        }
        _ => false,
    }
}

/// Computes, for every union, which variant takes each kind of wire token, and the record
/// variants chosen by class when there are several.
fn resolve_unions(plan: &mut Plan) {
    type Dispatch = ([Option<NodeId>; 7], Vec<(usize, NodeId)>);
    let dispatch: Vec<Option<Dispatch>> = plan
        .nodes
        .iter()
        .map(|node| match node {
            Node::Union(spec) => {
                let mut slots: [Option<NodeId>; 7] = [None; 7];
                // A float variant takes ints only when no variant is an int (an int enum or
                // literal as well as `int`), whichever comes first: `float | IntEnum` reads 1
                // as the enum's member.
                let mut float_ints = None;
                for &variant in &spec.variants {
                    let node = &plan.nodes[variant];
                    for token in token_kinds(plan, node) {
                        if let (Token::Int, Node::Float(_)) = (token, node) {
                            float_ints.get_or_insert(variant);
                            continue;
                        }
                        slots[token as usize].get_or_insert(variant);
                    }
                }
                let ints = &mut slots[Token::Int as usize];
                *ints = ints.or(float_ints);
                let mut records: Vec<(usize, NodeId)> = spec
                    .variants
                    .iter()
                    .filter_map(|&variant| match &plan.nodes[variant] {
                        Node::Record(record) if record.kind != RecordKind::TypedDict => {
                            Some((record.type_addr, variant))
                        }
                        _ => None,
                    })
                    .collect();
                if records.len() < 2 {
                    records.clear();
                }
                Some((slots, records))
            }
            _ => None,
        })
        .collect();
    for (node, dispatch) in plan.nodes.iter_mut().zip(dispatch) {
        if let (Node::Union(spec), Some((slots, records))) = (node, dispatch) {
            spec.records = records;
            spec.none = slots[Token::None as usize];
            spec.bool = slots[Token::Bool as usize];
            spec.int = slots[Token::Int as usize];
            spec.float = slots[Token::Float as usize];
            spec.str = slots[Token::Str as usize];
            spec.array = slots[Token::Array as usize];
            spec.object = slots[Token::Object as usize];
        }
    }
}

#[derive(Clone, Copy)]
enum Token {
    None = 0,
    Bool = 1,
    Int = 2,
    Float = 3,
    Str = 4,
    Array = 5,
    Object = 6,
}

/// The wire token kinds a node accepts as a union variant.
fn token_kinds(plan: &Plan, node: &Node) -> Vec<Token> {
    match node {
        Node::Any => vec![
            Token::None,
            Token::Bool,
            Token::Int,
            Token::Float,
            Token::Str,
            Token::Array,
            Token::Object,
        ],
        Node::None => vec![Token::None],
        Node::Bool => vec![Token::Bool],
        Node::Int(_) => vec![Token::Int],
        Node::Float(_) => vec![Token::Float, Token::Int],
        Node::Str(_)
        | Node::Bytes(_)
        | Node::Decimal(_)
        | Node::DateTime(_)
        | Node::Date
        | Node::Time(_)
        | Node::TimeDelta
        | Node::Uuid => vec![Token::Str],
        Node::Enum(spec) => {
            let mut kinds = Vec::new();
            if spec.has_str_values() {
                kinds.push(Token::Str);
            }
            if spec.has_int_values() {
                kinds.push(Token::Int);
            }
            kinds
        }
        Node::Literal(spec) => {
            let mut kinds = Vec::new();
            for (value, _) in &spec.values {
                let token = match value {
                    LiteralValue::Str(_) => Token::Str,
                    LiteralValue::Int(_) => Token::Int,
                    LiteralValue::Bool(_) => Token::Bool,
                };
                if !kinds.iter().any(|k: &Token| *k as usize == token as usize) {
                    kinds.push(token);
                }
            }
            kinds
        }
        Node::Union(_) => Vec::new(),
        Node::Sequence(_) | Node::Tuple(_) => vec![Token::Array],
        Node::Record(spec) if spec.kind == RecordKind::NamedTuple || spec.array_like => {
            vec![Token::Array]
        }
        Node::TaggedUnion(spec) => {
            let array_like = spec.tags.iter().any(
                |(_, id)| matches!(&plan.nodes[*id], Node::Record(record) if record.array_like),
            );
            vec![if array_like {
                Token::Array
            } else {
                Token::Object
            }]
        }
        Node::Record(_) | Node::Dict(_) => vec![Token::Object],
        // Never a union variant: `Optional[cls]` is a nullable extension node instead.
        Node::Extension(_) => Vec::new(),
        // Never a union variant either (`Optional[Raw]` is a nullable Raw node); UNSET is a
        // union variant of branched formats only, which dispatch by branch, not by token.
        Node::Raw { .. } | Node::Unset => Vec::new(),
    }
}

fn literal_value(value: &Bound<'_, PyAny>) -> PyResult<LiteralValue> {
    LiteralValue::of(value).ok_or_else(|| {
        let reason = if value.is_instance_of::<pyo3::types::PyInt>() {
            "integers must fit in 64 bits"
        } else {
            "only str, int and bool values are supported"
        };
        PyTypeError::new_err(format!(
            "polycodec cannot handle the literal {value}: {reason}"
        ))
    })
}

fn tz_rule(data: &Bound<'_, PyDict>) -> PyResult<TzRule> {
    Ok(match get_opt::<bool>(data, "tz")? {
        None => TzRule::Either,
        Some(true) => TzRule::Aware,
        Some(false) => TzRule::Naive,
    })
}

fn length_bounds(data: &Bound<'_, PyDict>) -> PyResult<LengthBounds> {
    Ok(LengthBounds {
        min: get_opt(data, "min_length")?,
        max: get_opt(data, "max_length")?,
    })
}

fn int_bound(data: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<i128>> {
    match data.get_item(key)? {
        Some(value) if !value.is_none() => value.extract().map(Some).map_err(|_| {
            PyTypeError::new_err(format!(
                "polycodec supports int constraints that fit in 128 bits; {key}={value} does not"
            ))
        }),
        _ => Ok(None),
    }
}

fn get_required<'py>(data: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    data.get_item(key)?.ok_or_else(|| {
        PyTypeError::new_err(format!("polycodec internal error: plan node lacks {key:?}"))
    })
}

// Typed reads of spec entries, each one out-of-line function rather than a `FromPyObject`
// extraction inlined at every field of every node kind: the plan is built once per codec, and
// this keeps its code small (docs/benchmarks.md, "Installed size").

#[inline(never)]
fn get_bool(data: &Bound<'_, PyDict>, key: &str) -> PyResult<bool> {
    get_required(data, key)?.extract()
}

#[inline(never)]
fn get_id(data: &Bound<'_, PyDict>, key: &str) -> PyResult<NodeId> {
    get_required(data, key)?.extract()
}

#[inline(never)]
fn get_string(data: &Bound<'_, PyDict>, key: &str) -> PyResult<String> {
    get_required(data, key)?.extract()
}

#[inline(never)]
fn get_strings(data: &Bound<'_, PyDict>, key: &str) -> PyResult<Vec<String>> {
    get_required(data, key)?.extract()
}

#[inline(never)]
fn get_ids(data: &Bound<'_, PyDict>, key: &str) -> PyResult<Vec<NodeId>> {
    get_required(data, key)?.extract()
}

#[inline(never)]
fn get_list<'py>(data: &Bound<'py, PyDict>, key: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    get_required(data, key)?.extract()
}

fn get_opt<'py, T: for<'a> FromPyObject<'a, 'py>>(
    data: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<Option<T>> {
    match data.get_item(key)? {
        Some(value) if !value.is_none() => Ok(Some(value.extract().map_err(Into::into)?)),
        _ => Ok(None),
    }
}

fn get_object(data: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<Py<PyAny>>> {
    match data.get_item(key)? {
        Some(value) if !value.is_none() => Ok(Some(value.unbind())),
        _ => Ok(None),
    }
}

/// Whether decoding a value of the plan runs no Python code with side effects (see
/// `Plan::decode_is_pure`): running it twice, as `from_builtins` does for input it refuses,
/// is then invisible.
fn decode_is_pure(py: Python<'_>, plan: &Plan) -> PyResult<bool> {
    let builtins = py.import("builtins")?;
    let object_new = builtins.getattr("object")?.getattr("__new__")?;
    // Default factories that are builtin types make a new empty value and nothing else.
    let pure_factories = [
        "list",
        "dict",
        "set",
        "frozenset",
        "tuple",
        "str",
        "int",
        "float",
    ]
    .iter()
    .map(|name| builtins.getattr(*name))
    .collect::<PyResult<Vec<_>>>()?;
    for node in &plan.nodes {
        match node {
            Node::Extension(_) => return Ok(false),
            Node::Record(spec) => {
                // A named tuple made by namedtuple's own `__new__` is made in C (`tuple_new`).
                let tuple_call = spec.kind == RecordKind::NamedTuple && !spec.tuple_new;
                if tuple_call || spec.post_init || spec.user_setattr {
                    return Ok(false);
                }
                if spec.kind == RecordKind::Dataclass
                    && !spec.cls.bind(py).getattr("__new__")?.is(&object_new)
                {
                    return Ok(false);
                }
                for field in &spec.fields {
                    if let FieldDefault::Factory(factory) = &field.default {
                        let factory = factory.bind(py);
                        if !pure_factories.iter().any(|pure| factory.is(pure)) {
                            return Ok(false);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(true)
}
