/*
 * swift_demangle_types.c — the Swift demangler's type grammar: builtin
 * types, tuples, function types and their argument labels, bound generics,
 * archetypes and associated types, protocols and protocol conformances.
 */
#include "symbolizer/swift_demangle_internal.h"

#include <string.h>

#include "symbolizer/swift_demangle.h"

/* ---- builtin types ---- */

struct builtin {
	char code;
	const char *name;
};

static const struct builtin builtins[] = {
	{'A', "Builtin.ImplicitActor"},
	{'b', "Builtin.BridgeObject"},
	{'B', "Builtin.UnsafeValueBuffer"},
	{'e', "Builtin.Executor"},
	{'I', "Builtin.IntLiteral"},
	{'O', "Builtin.UnknownObject"},
	{'o', "Builtin.NativeObject"},
	{'p', "Builtin.RawPointer"},
	{'j', "Builtin.Job"},
	{'D', "Builtin.DefaultActorStorage"},
	{'d', "Builtin.NonDefaultDistributedActorStorage"},
	{'c', "Builtin.RawUnsafeContinuation"},
	{'t', "Builtin.SILToken"},
	{'w', "Builtin.Word"},
	{'P', "Builtin.PackIndex"},
};

/* "Builtin.Int32", "Builtin.Vec4xInt8": a prefix, a size, maybe a tail. */
static sw_node *sized_builtin(sw_parser *p, const char *prefix, int size, const char *tail,
			      size_t tail_len)
{
	if (size <= 0 || size > 4096)
		return NULL;
	size_t n = strlen(prefix);
	char *s = sw_alloc(p->arena, n + 16 + tail_len);
	if (!s)
		return NULL;
	memcpy(s, prefix, n);
	char digits[12];
	int nd = 0;
	for (int v = size; v; v /= 10)
		digits[nd++] = (char)('0' + v % 10);
	while (nd)
		s[n++] = digits[--nd];
	if (tail) {
		s[n++] = 'x';
		memcpy(s + n, tail, tail_len);
		n += tail_len;
	}
	return sw_new_text(p, SW_BuiltinTypeName, s, n);
}

static sw_node *builtin_vector(sw_parser *p)
{
	int elts = sw_index(p) - 1;
	sw_node *elt = sw_pop_type_child(p);
	static const char pfx[] = "Builtin.";
	if (!elt || elt->kind != SW_BuiltinTypeName || elt->text_len < sizeof pfx - 1 ||
	    memcmp(elt->text, pfx, sizeof pfx - 1) != 0)
		return NULL;
	return sized_builtin(p, "Builtin.Vec", elts, elt->text + sizeof pfx - 1,
			     elt->text_len - (sizeof pfx - 1));
}

sw_node *sw_parse_builtin(sw_parser *p)
{
	char c = sw_next(p);
	sw_node *ty = NULL;
	switch (c) {
	case 'f': ty = sized_builtin(p, "Builtin.FPIEEE", sw_index(p) - 1, NULL, 0); break;
	case 'i': ty = sized_builtin(p, "Builtin.Int", sw_index(p) - 1, NULL, 0); break;
	case 'v': ty = builtin_vector(p); break;
	case 'V': {
		sw_node *elt = sw_pop_kind(p, SW_Type);
		sw_node *size = sw_pop_kind(p, SW_Type);
		ty = sw_with2(p, SW_BuiltinFixedArray, size, elt);
		break;
	}
	case 'W': ty = sw_with1(p, SW_BuiltinBorrow, sw_pop_kind(p, SW_Type)); break;
	case 'T': ty = sw_new(p, SW_BuiltinTupleType); break;
	default:
		for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
			if (builtins[i].code == c)
				ty = sw_new_str(p, SW_BuiltinTypeName, builtins[i].name);
		break;
	}
	return sw_type(p, ty);
}

/* ---- tuples, packs, lists ---- */

sw_node *sw_pop_tuple(sw_parser *p)
{
	sw_node *root = sw_new(p, SW_Tuple);
	if (!sw_pop_kind(p, SW_EmptyList)) {
		bool first;
		do {
			first = sw_pop_kind(p, SW_FirstElementMarker) != NULL;
			sw_node *elt = sw_new(p, SW_TupleElement);
			sw_node *variadic = sw_pop_kind(p, SW_VariadicMarker);
			if (variadic)
				sw_add(p, elt, variadic);
			sw_node *id = sw_pop_kind(p, SW_Identifier);
			if (id)
				sw_add(p, elt,
				       sw_new_text(p, SW_TupleElementName, id->text, id->text_len));
			sw_node *ty = sw_pop_kind(p, SW_Type);
			if (!ty || !sw_add(p, elt, ty) || !sw_add(p, root, elt))
				return NULL;
		} while (!first);
		sw_reverse(root, 0);
	}
	return sw_type(p, root);
}

/* Types down to the first-element marker, in mangled order. */
static sw_node *pop_types_into(sw_parser *p, sw_node *root)
{
	if (!root || sw_pop_kind(p, SW_EmptyList))
		return root;
	bool first;
	do {
		first = sw_pop_kind(p, SW_FirstElementMarker) != NULL;
		sw_node *ty = sw_pop_kind(p, SW_Type);
		if (!ty || !sw_add(p, root, ty))
			return NULL;
	} while (!first);
	sw_reverse(root, 0);
	return root;
}

sw_node *sw_pop_type_list(sw_parser *p)
{
	return pop_types_into(p, sw_new(p, SW_TypeList));
}

static sw_node *pop_sil_pack(sw_parser *p)
{
	char c = sw_next(p);
	if (c != 'd' && c != 'i')
		return NULL;
	return sw_type(
		p, pop_types_into(p, sw_new(p, c == 'd' ? SW_SILPackDirect : SW_SILPackIndirect)));
}

/* ---- function types ---- */

static bool is_isolation(sw_kind k)
{
	return k == SW_GlobalActorFunctionType || k == SW_IsolatedAnyFunctionType ||
	       k == SW_NonIsolatedCallerFunctionType;
}

static bool is_throws(sw_kind k)
{
	return k == SW_ThrowsAnnotation || k == SW_TypedThrowsAnnotation;
}

static sw_node *pop_params(sw_parser *p, sw_kind kind)
{
	sw_node *params;
	if (sw_pop_kind(p, SW_EmptyList))
		params = sw_type(p, sw_new(p, SW_Tuple));
	else
		params = sw_pop_kind(p, SW_Type);
	return sw_with1(p, kind, params);
}

static sw_node *clang_type(sw_parser *p)
{
	int n = sw_natural(p);
	if (n <= 0 || (size_t)n > p->len - p->pos)
		return NULL;
	sw_node *nd = sw_new_text(p, SW_ClangType, p->text + p->pos, (size_t)n);
	p->pos += (size_t)n;
	return nd;
}

/* Whether K is one of the attributes a function type pops before its
 * parameters. */
static bool is_function_attr_kind(sw_kind k)
{
	return k == SW_SendingResultFunctionType || is_isolation(k) ||
	       k == SW_DifferentiableFunctionType || is_throws(k) ||
	       k == SW_ConcurrentFunctionType || k == SW_AsyncAnnotation;
}

sw_node *sw_pop_function_type(sw_parser *p, sw_kind kind, bool has_clang_type)
{
	sw_node *fn = sw_new(p, kind);
	if (has_clang_type)
		sw_add(p, fn, clang_type(p));
	/* Most function types have no attribute: one look at the top of the
	 * stack says so. */
	if (p->stack.n && is_function_attr_kind((sw_kind)p->stack.v[p->stack.n - 1]->kind)) {
		sw_add(p, fn, sw_pop_kind(p, SW_SendingResultFunctionType));
		sw_add(p, fn, sw_pop_if(p, is_isolation));
		sw_add(p, fn, sw_pop_kind(p, SW_DifferentiableFunctionType));
		sw_add(p, fn, sw_pop_if(p, is_throws));
		sw_add(p, fn, sw_pop_kind(p, SW_ConcurrentFunctionType));
		sw_add(p, fn, sw_pop_kind(p, SW_AsyncAnnotation));
	}
	fn = sw_add_ok(p, fn, pop_params(p, SW_ArgumentTuple));
	fn = sw_add_ok(p, fn, pop_params(p, SW_ReturnType));
	return sw_type(p, fn);
}

/* Swift 4 put labels inside the parameter tuple: take them out. */
static sw_node *old_label(sw_parser *p, sw_node *tuple, size_t i)
{
	sw_node *param = sw_kid(tuple, i);
	if (!param)
		return NULL;
	for (uint32_t k = 0; k < param->nkids; k++) {
		sw_node *c = param->kids[k];
		if (c->kind != SW_TupleElementName)
			continue;
		memmove(param->kids + k, param->kids + k + 1,
			(param->nkids - k - 1) * sizeof param->kids[0]);
		param->nkids--;
		return sw_new_text(p, SW_Identifier, c->text, c->text_len);
	}
	return sw_new(p, SW_FirstElementMarker);
}

static sw_node *function_params_of(sw_node *type)
{
	sw_node *fn = sw_kid(type, 0);
	if (fn && fn->kind == SW_DependentGenericType)
		fn = sw_kid(sw_kid(fn, 1), 0);
	if (!fn || (fn->kind != SW_FunctionType && fn->kind != SW_NoEscapeFunctionType))
		return NULL;
	/* Usually there is no attribute to skip. */
	if (fn->nkids && fn->kids[0]->kind == SW_ArgumentTuple)
		return fn->kids[0];
	static const sw_kind skip[] = {
		SW_SendingResultFunctionType,  SW_GlobalActorFunctionType,
		SW_IsolatedAnyFunctionType,    SW_NonIsolatedCallerFunctionType,
		SW_DifferentiableFunctionType, SW_ThrowsAnnotation,
		SW_ConcurrentFunctionType,     SW_AsyncAnnotation,
	};
	size_t first = 0;
	for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++) {
		sw_node *c = sw_kid(fn, first);
		if (c && (c->kind == skip[i] ||
			  (skip[i] == SW_ThrowsAnnotation && c->kind == SW_TypedThrowsAnnotation)))
			first++;
	}
	sw_node *args = sw_kid(fn, first);
	return args && args->kind == SW_ArgumentTuple ? args : NULL;
}

sw_node *sw_pop_labels(sw_parser *p, sw_node *type)
{
	if (!p->old && sw_pop_kind(p, SW_EmptyList))
		return sw_new(p, SW_LabelList);
	if (!type || type->kind != SW_Type)
		return NULL;
	sw_node *args = function_params_of(type);
	sw_node *params = sw_kid(sw_kid(args, 0), 0);
	if (!params)
		return NULL;
	size_t n = params->kind == SW_Tuple ? params->nkids : 1;
	if (n == 0)
		return NULL;
	sw_node *labels = sw_new(p, SW_LabelList);
	if (p->old && params->kind != SW_Tuple)
		return labels;
	bool has = false;
	for (size_t i = 0; i < n; i++) {
		sw_node *l = p->old ? old_label(p, params, i) : sw_pop(p);
		if (!l || (l->kind != SW_Identifier && l->kind != SW_FirstElementMarker))
			return NULL;
		sw_add(p, labels, l);
		has |= l->kind != SW_FirstElementMarker;
	}
	if (!has)
		return sw_new(p, SW_LabelList);
	if (!p->old)
		sw_reverse(labels, 0);
	return labels;
}

/* ---- protocols and conformances ---- */

bool sw_is_protocol_node(const sw_node *nd)
{
	if (!nd)
		return false;
	if (nd->kind == SW_Type)
		return sw_is_protocol_node(sw_kid(nd, 0));
	return nd->kind == SW_Protocol;
}

sw_node *sw_pop_protocol(sw_parser *p)
{
	sw_node *ty = sw_pop_kind(p, SW_Type);
	if (ty)
		return ty->nkids >= 1 && sw_is_protocol_node(ty) ? ty : NULL;
	sw_node *name = sw_pop_if(p, sw_is_decl_name);
	sw_node *ctx = sw_pop_context(p);
	return sw_type(p, sw_with2(p, SW_Protocol, ctx, name));
}

sw_node *sw_parse_protocol_list(sw_parser *p)
{
	sw_node *list = sw_new(p, SW_TypeList);
	sw_node *protos = sw_with1(p, SW_ProtocolList, list);
	if (!protos || sw_pop_kind(p, SW_EmptyList))
		return protos;
	bool first;
	do {
		first = sw_pop_kind(p, SW_FirstElementMarker) != NULL;
		sw_node *proto = sw_pop_protocol(p);
		if (!proto || !sw_add(p, list, proto))
			return NULL;
	} while (!first);
	sw_reverse(list, 0);
	return protos;
}

sw_node *sw_parse_protocol_list_type(sw_parser *p)
{
	return sw_type(p, sw_parse_protocol_list(p));
}

sw_node *sw_pop_conformance(sw_parser *p)
{
	sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
	sw_node *mod = sw_pop_module(p);
	sw_node *proto = sw_pop_protocol(p);
	sw_node *type = sw_pop_kind(p, SW_Type);
	sw_node *ident = NULL;
	if (!type) {
		ident = sw_pop_kind(p, SW_Identifier);
		type = sw_pop_kind(p, SW_Type);
	}
	if (sig)
		type = sw_type(p, sw_with2(p, SW_DependentGenericType, sig, type));
	sw_node *conf = sw_with3(p, SW_ProtocolConformance, type, proto, mod);
	if (ident)
		sw_add(p, conf, ident);
	return conf;
}

static bool is_any_conformance(sw_kind k)
{
	switch (k) {
	case SW_ConcreteProtocolConformance:
	case SW_PackProtocolConformance:
	case SW_DependentProtocolConformanceRoot:
	case SW_DependentProtocolConformanceInherited:
	case SW_DependentProtocolConformanceAssociated:
	case SW_DependentProtocolConformanceOpaque: return true;
	default: return false;
	}
}

static bool is_dependent_conformance(sw_kind k)
{
	return k == SW_DependentProtocolConformanceRoot ||
	       k == SW_DependentProtocolConformanceInherited ||
	       k == SW_DependentProtocolConformanceAssociated;
}

sw_node *sw_pop_any_conformance(sw_parser *p)
{
	return sw_pop_if(p, is_any_conformance);
}

static sw_node *pop_conformance_list(sw_parser *p)
{
	sw_node *list = sw_new(p, SW_AnyProtocolConformanceList);
	if (!list || sw_pop_kind(p, SW_EmptyList))
		return list;
	bool first;
	do {
		first = sw_pop_kind(p, SW_FirstElementMarker) != NULL;
		sw_node *c = sw_pop_any_conformance(p);
		if (!c || !sw_add(p, list, c))
			return NULL;
	} while (!first);
	sw_reverse(list, 0);
	return list;
}

static sw_node *conformance_index(sw_parser *p)
{
	int idx = sw_index(p);
	if (idx <= 0)
		return NULL;
	if (idx == 1)
		return sw_new(p, SW_UnknownIndex);
	return sw_new_index(p, SW_Index, (uint64_t)idx - 2);
}

static sw_node *concrete_conformance(sw_parser *p)
{
	sw_node *cond = pop_conformance_list(p);
	sw_node *ref = sw_pop_kind(p, SW_ProtocolConformanceRefInTypeModule);
	if (!ref)
		ref = sw_pop_kind(p, SW_ProtocolConformanceRefInProtocolModule);
	if (!ref) {
		sw_node *mod = sw_pop_module(p);
		sw_node *proto = sw_pop_protocol(p);
		ref = sw_with2(p, SW_ProtocolConformanceRefInOtherModule, proto, mod);
	}
	sw_node *type = sw_pop_kind(p, SW_Type);
	return sw_with3(p, SW_ConcreteProtocolConformance, type, ref, cond);
}

static sw_node *dependent_conformance(sw_parser *p, char c)
{
	sw_node *index = conformance_index(p);
	if (c == 'D') {
		sw_node *proto = sw_pop_protocol(p);
		sw_node *dep = sw_pop_kind(p, SW_Type);
		return sw_with3(p, SW_DependentProtocolConformanceRoot, dep, proto, index);
	}
	if (c == 'I') {
		sw_node *proto = sw_pop_protocol(p);
		sw_node *nested = sw_pop_if(p, is_dependent_conformance);
		return sw_with3(p, SW_DependentProtocolConformanceInherited, nested, proto, index);
	}
	sw_node *proto = sw_pop_protocol(p);
	sw_node *dep = sw_pop_kind(p, SW_Type);
	sw_node *assoc = sw_with2(p, SW_DependentAssociatedConformance, dep, proto);
	sw_node *nested = sw_pop_if(p, is_dependent_conformance);
	return sw_with3(p, SW_DependentProtocolConformanceAssociated, nested, assoc, index);
}

sw_node *sw_parse_conformance_op(sw_parser *p)
{
	char c = sw_next(p);
	switch (c) {
	case 'A':
	case 'D':
	case 'I': return dependent_conformance(p, c);
	case 'C': return concrete_conformance(p);
	case 'O': {
		sw_node *type = sw_pop_kind(p, SW_Type);
		sw_node *conf = sw_pop_if(p, is_dependent_conformance);
		return sw_with2(p, SW_DependentProtocolConformanceOpaque, conf, type);
	}
	case 'P': return sw_with1(p, SW_ProtocolConformanceRefInTypeModule, sw_pop_protocol(p));
	case 'p': return sw_with1(p, SW_ProtocolConformanceRefInProtocolModule, sw_pop_protocol(p));
	case 'X': return sw_with1(p, SW_PackProtocolConformance, pop_conformance_list(p));
	case 'c': return sw_with1(p, SW_ProtocolConformanceDescriptorRecord, sw_pop_conformance(p));
	case 'n': return sw_with1(p, SW_NominalTypeDescriptorRecord, sw_pop_kind(p, SW_Type));
	case 'o': return sw_with1(p, SW_OpaqueTypeDescriptorRecord, sw_pop(p));
	case 'r': return sw_with1(p, SW_ProtocolDescriptorRecord, sw_pop_protocol(p));
	case 'F': return sw_new(p, SW_AccessibleFunctionRecord);
	default: return NULL;
	}
}

sw_node *sw_parse_retroactive(sw_parser *p)
{
	sw_node *index = sw_index_node(p);
	sw_node *conf = sw_pop_any_conformance(p);
	return sw_with2(p, SW_RetroactiveConformance, index, conf);
}

/* ---- bound generics ---- */

static sw_node *pop_retroactive_conformances(sw_parser *p)
{
	sw_node *list = NULL, *c;
	while ((c = sw_pop_kind(p, SW_RetroactiveConformance))) {
		if (!list)
			list = sw_new(p, SW_TypeList);
		sw_add(p, list, c);
	}
	sw_reverse(list, 0);
	return list;
}

/* The argument lists of a generic type, innermost first, each list in
 * mangled order. */
bool sw_bound_generics(sw_parser *p, sw_vec *lists, sw_node **retro)
{
	*retro = pop_retroactive_conformances(p);
	for (;;) {
		sw_node *list = sw_new(p, SW_TypeList);
		if (!list || !sw_vec_push(p->arena, lists, list))
			return false;
		sw_node *ty;
		while ((ty = sw_pop_kind(p, SW_Type)))
			sw_add(p, list, ty);
		sw_reverse(list, 0);
		if (sw_pop_kind(p, SW_EmptyList))
			return true;
		if (!sw_pop_kind(p, SW_FirstElementMarker))
			return false;
	}
}

static bool consumes_generic_args(const sw_node *nd)
{
	switch (nd->kind) {
	case SW_Variable:
	case SW_Subscript:
	case SW_ImplicitClosure:
	case SW_ExplicitClosure:
	case SW_DefaultArgumentInitializer:
	case SW_Initializer:
	case SW_PropertyWrapperBackingInitializer:
	case SW_PropertyWrappedFieldInitAccessor:
	case SW_PropertyWrapperInitFromProjectedValue:
	case SW_Static: return false;
	default: return true;
	}
}

static sw_kind bound_kind(sw_kind k)
{
	switch (k) {
	case SW_Class: return SW_BoundGenericClass;
	case SW_Structure: return SW_BoundGenericStructure;
	case SW_Enum: return SW_BoundGenericEnum;
	case SW_Protocol: return SW_BoundGenericProtocol;
	case SW_OtherNominalType: return SW_BoundGenericOtherNominalType;
	case SW_TypeAlias: return SW_BoundGenericTypeAlias;
	case SW_Function:
	case SW_Constructor: return SW_BoundGenericFunction;
	default: return SW_KIND_COUNT;
	}
}

static sw_node *bound_args(sw_parser *p, sw_node *nominal, sw_vec *lists, size_t idx);

/* Binds the outer argument lists to NOMINAL's parents. */
static sw_node *bind_parent(sw_parser *p, sw_node *nominal, sw_vec *lists, size_t idx)
{
	sw_node *ctx = nominal->kids[0], *parent;
	if (ctx->kind == SW_Extension) {
		parent = bound_args(p, sw_kid(ctx, 1), lists, idx);
		parent = sw_with2(p, SW_Extension, sw_kid(ctx, 0), parent);
		if (ctx->nkids == 3)
			sw_add(p, parent, ctx->kids[2]);
	} else {
		parent = bound_args(p, ctx, lists, idx);
	}
	sw_node *copy = sw_with1(p, (sw_kind)nominal->kind, parent);
	if (!copy)
		return NULL;
	for (uint32_t i = 1; i < nominal->nkids; i++)
		sw_add(p, copy, nominal->kids[i]);
	return copy;
}

static sw_node *bound_args(sw_parser *p, sw_node *nominal, sw_vec *lists, size_t idx)
{
	if (!nominal || idx >= lists->n || nominal->nkids == 0)
		return NULL;
	if (++p->depth > SYM_SWIFT_MAX_DEPTH) {
		p->failed = true;
		return NULL;
	}
	bool consumes = consumes_generic_args(nominal);
	sw_node *args = lists->v[idx];
	if (consumes)
		idx++;
	if (idx < lists->n)
		nominal = bind_parent(p, nominal, lists, idx);
	p->depth--;
	if (!nominal || !consumes || args->nkids == 0)
		return nominal;
	sw_kind k = bound_kind((sw_kind)nominal->kind);
	if (k == SW_KIND_COUNT)
		return NULL;
	if (k == SW_BoundGenericFunction)
		return sw_with2(p, k, nominal, args);
	return sw_with2(p, k, sw_type(p, nominal), args);
}

static bool is_any_generic(sw_kind k)
{
	switch (k) {
	case SW_Structure:
	case SW_Class:
	case SW_Enum:
	case SW_Protocol:
	case SW_OtherNominalType:
	case SW_TypeAlias:
	case SW_BuiltinTupleType: return true;
	default: return false;
	}
}

sw_node *sw_parse_bound_generic(sw_parser *p)
{
	sw_vec lists = {0};
	sw_node *retro;
	if (!sw_bound_generics(p, &lists, &retro))
		return NULL;
	sw_node *nominal = sw_pop_type_child(p);
	if (!nominal || !is_any_generic((sw_kind)nominal->kind))
		return NULL;
	sw_node *bound = bound_args(p, nominal, &lists, 0);
	if (!bound)
		return NULL;
	if (retro)
		sw_add(p, bound, retro);
	sw_node *ty = sw_type(p, bound);
	sw_add_subst(p, ty);
	return ty;
}

/* ---- generic parameters, associated types, archetypes ---- */

sw_node *sw_generic_param(sw_parser *p, int depth, int index)
{
	if (depth < 0 || index < 0)
		return NULL;
	return sw_with2(p, SW_DependentGenericParamType, sw_new_index(p, SW_Index, (uint64_t)depth),
			sw_new_index(p, SW_Index, (uint64_t)index));
}

sw_node *sw_generic_param_index(sw_parser *p)
{
	if (sw_next_if(p, 'd')) {
		int depth = sw_index(p) + 1;
		int index = sw_index(p);
		return sw_generic_param(p, depth, index);
	}
	if (sw_next_if(p, 'z'))
		return sw_generic_param(p, 0, 0);
	if (sw_next_if(p, 's'))
		return sw_new(p, SW_ConstrainedExistentialSelf);
	return sw_generic_param(p, 0, sw_index(p) + 1);
}

sw_node *sw_pop_assoc_type_name(sw_parser *p)
{
	sw_node *proto = sw_pop_kind(p, SW_Type);
	if (proto && !sw_is_protocol_node(proto))
		return NULL;
	sw_node *id = sw_pop_kind(p, SW_Identifier);
	sw_node *at = sw_with1(p, SW_DependentAssociatedTypeRef, id);
	if (proto)
		sw_add(p, at, proto);
	return at;
}

sw_node *sw_pop_assoc_type_path(sw_parser *p)
{
	sw_node *path = sw_new(p, SW_AssocTypePath);
	bool first;
	do {
		first = sw_pop_kind(p, SW_FirstElementMarker) != NULL;
		sw_node *at = sw_pop_assoc_type_name(p);
		if (!at || !sw_add(p, path, at))
			return NULL;
	} while (!first);
	sw_reverse(path, 0);
	return path;
}

sw_node *sw_assoc_simple(sw_parser *p, sw_node *base)
{
	sw_node *name = sw_pop_assoc_type_name(p);
	sw_node *base_ty = base ? sw_type(p, base) : sw_pop_kind(p, SW_Type);
	return sw_type(p, sw_with2(p, SW_DependentMemberType, base_ty, name));
}

sw_node *sw_assoc_compound(sw_parser *p, sw_node *base)
{
	sw_vec names = {0};
	bool first;
	do {
		first = sw_pop_kind(p, SW_FirstElementMarker) != NULL;
		sw_node *name = sw_pop_assoc_type_name(p);
		if (!name || !sw_vec_push(p->arena, &names, name))
			return NULL;
	} while (!first);
	sw_node *base_ty = base ? sw_type(p, base) : sw_pop_kind(p, SW_Type);
	while (names.n) {
		sw_node *dep = sw_add_ok(p, sw_new(p, SW_DependentMemberType), base_ty);
		base_ty = sw_type(p, sw_add_ok(p, dep, names.v[--names.n]));
	}
	return base_ty;
}

static sw_node *opaque_type(sw_parser *p)
{
	int index = sw_index(p);
	sw_vec lists = {0};
	sw_node *retro;
	if (index < 0 || !sw_bound_generics(p, &lists, &retro))
		return NULL;
	sw_node *name = sw_pop(p);
	sw_node *opaque =
		sw_with2(p, SW_OpaqueType, name, sw_new_index(p, SW_Index, (uint64_t)index));
	sw_node *bound = sw_new(p, SW_TypeList);
	for (size_t i = lists.n; i-- > 0;)
		sw_add(p, bound, lists.v[i]);
	opaque = sw_add_ok(p, opaque, bound);
	if (retro)
		sw_add(p, opaque, retro);
	sw_node *ty = sw_type(p, opaque);
	sw_add_subst(p, ty);
	return ty;
}

static sw_node *with_subst(sw_parser *p, sw_node *nd)
{
	sw_add_subst(p, nd);
	return nd;
}

static sw_node *archetype_types(sw_parser *p, char c)
{
	switch (c) {
	case 'x': return with_subst(p, sw_assoc_simple(p, NULL));
	case 'X': return with_subst(p, sw_assoc_compound(p, NULL));
	case 'y': return with_subst(p, sw_assoc_simple(p, sw_generic_param_index(p)));
	case 'Y': return with_subst(p, sw_assoc_compound(p, sw_generic_param_index(p)));
	case 'z': return with_subst(p, sw_assoc_simple(p, sw_generic_param(p, 0, 0)));
	case 'Z': return with_subst(p, sw_assoc_compound(p, sw_generic_param(p, 0, 0)));
	case 'P': return sw_type(p, pop_types_into(p, sw_new(p, SW_Pack)));
	case 'S': return pop_sil_pack(p);
	default: return NULL;
	}
}

sw_node *sw_parse_archetype(sw_parser *p)
{
	char c = sw_next(p);
	switch (c) {
	case 'a': {
		sw_node *id = sw_pop_kind(p, SW_Identifier);
		sw_node *arche = sw_pop_type_child(p);
		return with_subst(p, sw_type(p, sw_with2(p, SW_AssociatedTypeRef, arche, id)));
	}
	case 'O': return sw_with1(p, SW_OpaqueReturnTypeOf, sw_pop_context(p));
	case 'o': return opaque_type(p);
	case 'r': return sw_type(p, sw_new(p, SW_OpaqueReturnType));
	case 'R': {
		int ordinal = sw_index(p);
		if (ordinal < 0)
			return NULL;
		sw_node *idx = sw_new_index(p, SW_OpaqueReturnTypeIndex, (uint64_t)ordinal);
		return sw_type(p, sw_with1(p, SW_OpaqueReturnType, idx));
	}
	case 'p': {
		sw_node *count = sw_pop_type_child(p);
		sw_node *pattern = sw_pop_type_child(p);
		return sw_type(p, sw_with2(p, SW_PackExpansion, pattern, count));
	}
	case 'e': {
		sw_node *pack = sw_pop_type_child(p);
		int level = sw_index(p);
		if (level < 0)
			return NULL;
		sw_node *lv = sw_new_index(p, SW_PackElementLevel, (uint64_t)level);
		return sw_type(p, sw_with2(p, SW_PackElement, pack, lv));
	}
	default: return archetype_types(p, c);
	}
}
