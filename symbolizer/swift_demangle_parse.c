/*
 * swift_demangle_parse.c — the heart of the Swift demangler's parser: the
 * operator dispatch, substitutions (A…, S…, word substitutions inside
 * identifiers), identifiers (including Punycode), contexts and the named
 * entities (functions, variables, subscripts, accessors, closures).
 *
 * The mangling is postfix: each operator pops the nodes it needs from a
 * stack and pushes its result, exactly like Swift's Demangler.cpp, so the
 * tree matches the one Swift's printer expects.
 */
#include "symbolizer/swift_demangle_internal.h"

#include <string.h>

/* Swift's SubstitutionMerging::MaxRepeatCount. */
#define SW_MAX_REPEAT 2048
/* Punycode insertion is quadratic; real identifiers are far shorter. */
#define SW_MAX_PUNYCODE 1024

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

bool sw_is_decl_name(sw_kind k)
{
	switch (k) {
	case SW_Identifier:
	case SW_LocalDeclName:
	case SW_PrivateDeclName:
	case SW_RelatedEntityDeclName:
	case SW_PrefixOperator:
	case SW_PostfixOperator:
	case SW_InfixOperator: return true;
	default: return false;
	}
}

bool sw_is_entity(sw_kind k)
{
	return k == SW_Type || sw_is_context(k);
}

static bool is_function_attr(sw_kind k)
{
	switch (k) {
	case SW_FunctionSignatureSpecialization:
	case SW_GenericSpecialization:
	case SW_GenericSpecializationPrespecialized:
	case SW_InlinedGenericFunction:
	case SW_GenericSpecializationNotReAbstracted:
	case SW_GenericPartialSpecialization:
	case SW_GenericPartialSpecializationNotReAbstracted:
	case SW_GenericSpecializationInResilienceDomain:
	case SW_ObjCAttribute:
	case SW_NonObjCAttribute:
	case SW_DynamicAttribute:
	case SW_DirectMethodReferenceAttribute:
	case SW_PartialApplyForwarder:
	case SW_PartialApplyObjCForwarder:
	case SW_OutlinedVariable:
	case SW_OutlinedReadOnlyObject:
	case SW_OutlinedBridgedMethod:
	case SW_MergedFunction:
	case SW_DistributedThunk:
	case SW_DistributedAccessor:
	case SW_DynamicallyReplaceableFunctionImpl:
	case SW_DynamicallyReplaceableFunctionKey:
	case SW_DynamicallyReplaceableFunctionVar:
	case SW_AsyncFunctionPointer:
	case SW_AsyncAwaitResumePartialFunction:
	case SW_AsyncSuspendResumePartialFunction:
	case SW_AccessibleFunctionRecord:
	case SW_BackDeploymentThunk:
	case SW_BackDeploymentFallback:
	case SW_HasSymbolQuery:
	case SW_CoroFunctionPointer:
	case SW_DefaultOverride: return true;
	default: return false;
	}
}

/* The whole symbol: operators until the end, then the function attributes
 * (thunk kinds, specializations) on top of the stack wrap what is below. */
sw_node *sw_parse_symbol(sw_parser *p)
{
	while (p->pos < p->len) {
		sw_node *nd = sw_parse_operator(p);
		if (!nd || p->failed)
			return NULL;
		sw_push(p, nd);
	}
	sw_node *top = sw_new(p, SW_Global);
	sw_node *suffix = sw_pop_kind(p, SW_Suffix);
	sw_node *parent = top;
	sw_node *attr;
	while ((attr = sw_pop_if(p, is_function_attr))) {
		sw_add(p, parent, attr);
		if (attr->kind == SW_PartialApplyForwarder ||
		    attr->kind == SW_PartialApplyObjCForwarder)
			parent = attr;
	}
	for (size_t i = 0; i < p->stack.n; i++) {
		sw_node *nd = p->stack.v[i];
		sw_add(p, parent, nd->kind == SW_Type ? sw_kid(nd, 0) : nd);
	}
	if (suffix)
		sw_add(p, top, suffix);
	if (p->failed || !top || !top->nkids)
		return NULL;
	return top;
}

/* ---- substitutions ---- */

static sw_node *push_multi(sw_parser *p, int repeat, size_t idx)
{
	if (idx >= p->substs.n || repeat > SW_MAX_REPEAT)
		return NULL;
	sw_node *nd = p->substs.v[idx];
	while (repeat-- > 1)
		sw_push(p, nd);
	return nd;
}

/* A<n>a…Z / A<n>_: back-references to earlier nodes, several in a row. */
static sw_node *multi_substitution(sw_parser *p)
{
	int repeat = -1;
	for (;;) {
		char c = sw_next(p);
		if (c == 0)
			return NULL;
		if (is_lower(c)) {
			sw_node *nd = push_multi(p, repeat, (size_t)(c - 'a'));
			if (!nd)
				return NULL;
			sw_push(p, nd);
			repeat = -1;
			continue;
		}
		if (is_upper(c))
			return push_multi(p, repeat, (size_t)(c - 'A'));
		if (c == '_') {
			size_t idx = (size_t)(repeat + 27);
			return idx < p->substs.n ? p->substs.v[idx] : NULL;
		}
		p->pos--;
		repeat = sw_natural(p);
		if (repeat < 0)
			return NULL;
	}
}

struct std_type {
	char code;
	bool concurrency;
	sw_kind kind;
	const char *name;
};

static const struct std_type std_types[] = {
	{'A', false, SW_Structure, "AutoreleasingUnsafeMutablePointer"},
	{'a', false, SW_Structure, "Array"},
	{'b', false, SW_Structure, "Bool"},
	{'D', false, SW_Structure, "Dictionary"},
	{'d', false, SW_Structure, "Double"},
	{'f', false, SW_Structure, "Float"},
	{'h', false, SW_Structure, "Set"},
	{'I', false, SW_Structure, "DefaultIndices"},
	{'i', false, SW_Structure, "Int"},
	{'J', false, SW_Structure, "Character"},
	{'N', false, SW_Structure, "ClosedRange"},
	{'n', false, SW_Structure, "Range"},
	{'O', false, SW_Structure, "ObjectIdentifier"},
	{'P', false, SW_Structure, "UnsafePointer"},
	{'p', false, SW_Structure, "UnsafeMutablePointer"},
	{'R', false, SW_Structure, "UnsafeBufferPointer"},
	{'r', false, SW_Structure, "UnsafeMutableBufferPointer"},
	{'S', false, SW_Structure, "String"},
	{'s', false, SW_Structure, "Substring"},
	{'u', false, SW_Structure, "UInt"},
	{'V', false, SW_Structure, "UnsafeRawPointer"},
	{'v', false, SW_Structure, "UnsafeMutableRawPointer"},
	{'W', false, SW_Structure, "UnsafeRawBufferPointer"},
	{'w', false, SW_Structure, "UnsafeMutableRawBufferPointer"},
	{'q', false, SW_Enum, "Optional"},
	{'B', false, SW_Protocol, "BinaryFloatingPoint"},
	{'E', false, SW_Protocol, "Encodable"},
	{'e', false, SW_Protocol, "Decodable"},
	{'F', false, SW_Protocol, "FloatingPoint"},
	{'G', false, SW_Protocol, "RandomNumberGenerator"},
	{'H', false, SW_Protocol, "Hashable"},
	{'j', false, SW_Protocol, "Numeric"},
	{'K', false, SW_Protocol, "BidirectionalCollection"},
	{'k', false, SW_Protocol, "RandomAccessCollection"},
	{'L', false, SW_Protocol, "Comparable"},
	{'l', false, SW_Protocol, "Collection"},
	{'M', false, SW_Protocol, "MutableCollection"},
	{'m', false, SW_Protocol, "RangeReplaceableCollection"},
	{'Q', false, SW_Protocol, "Equatable"},
	{'T', false, SW_Protocol, "Sequence"},
	{'t', false, SW_Protocol, "IteratorProtocol"},
	{'U', false, SW_Protocol, "UnsignedInteger"},
	{'X', false, SW_Protocol, "RangeExpression"},
	{'x', false, SW_Protocol, "Strideable"},
	{'Y', false, SW_Protocol, "RawRepresentable"},
	{'y', false, SW_Protocol, "StringProtocol"},
	{'Z', false, SW_Protocol, "SignedInteger"},
	{'z', false, SW_Protocol, "BinaryInteger"},
	{'A', true, SW_Protocol, "Actor"},
	{'C', true, SW_Structure, "CheckedContinuation"},
	{'c', true, SW_Structure, "UnsafeContinuation"},
	{'E', true, SW_Structure, "CancellationError"},
	{'e', true, SW_Structure, "UnownedSerialExecutor"},
	{'F', true, SW_Protocol, "Executor"},
	{'f', true, SW_Protocol, "SerialExecutor"},
	{'G', true, SW_Structure, "TaskGroup"},
	{'g', true, SW_Structure, "ThrowingTaskGroup"},
	{'h', true, SW_Protocol, "TaskExecutor"},
	{'I', true, SW_Protocol, "AsyncIteratorProtocol"},
	{'i', true, SW_Protocol, "AsyncSequence"},
	{'J', true, SW_Structure, "UnownedJob"},
	{'M', true, SW_Class, "MainActor"},
	{'P', true, SW_Structure, "TaskPriority"},
	{'S', true, SW_Structure, "AsyncStream"},
	{'s', true, SW_Structure, "AsyncThrowingStream"},
	{'T', true, SW_Structure, "Task"},
	{'t', true, SW_Structure, "UnsafeCurrentTask"},
};

static sw_node *swift_type(sw_parser *p, sw_kind kind, const char *name)
{
	return sw_type(p, sw_with2(p, kind, sw_new_str(p, SW_Module, "Swift"),
				   sw_new_str(p, SW_Identifier, name)));
}

static sw_node *standard_type(sw_parser *p, char code, bool concurrency)
{
	for (size_t i = 0; i < sizeof std_types / sizeof std_types[0]; i++)
		if (std_types[i].code == code && std_types[i].concurrency == concurrency)
			return swift_type(p, std_types[i].kind, std_types[i].name);
	return NULL;
}

static sw_node *standard_substitution(sw_parser *p)
{
	char c = sw_next(p);
	switch (c) {
	case 0: return NULL;
	case 'o': return sw_new_str(p, SW_Module, "__C");
	case 'C': return sw_new_str(p, SW_Module, "__C_Synthesized");
	case 'g': {
		sw_node *list = sw_with1(p, SW_TypeList, sw_pop_kind(p, SW_Type));
		sw_node *opt = sw_type(p, sw_with2(p, SW_BoundGenericEnum,
						   swift_type(p, SW_Enum, "Optional"), list));
		sw_add_subst(p, opt);
		return opt;
	}
	default: break;
	}
	p->pos--;
	int repeat = sw_natural(p);
	if (repeat > SW_MAX_REPEAT)
		return NULL;
	bool second = sw_next_if(p, 'c');
	sw_node *nd = standard_type(p, sw_next(p), second);
	if (!nd)
		return NULL;
	while (repeat-- > 1)
		sw_push(p, nd);
	return nd;
}

/* ---- identifiers ---- */

/* Text being assembled in the arena (word substitutions, Punycode). */
typedef struct sw_str {
	char *p;
	size_t n;
	size_t cap;
} sw_str;

static bool str_append(sw_parser *p, sw_str *s, const char *src, size_t n)
{
	if (s->n + n > s->cap) {
		size_t cap = (s->cap ? s->cap : 32) * 2 + n;
		char *np = sw_alloc(p->arena, cap);
		if (!np) {
			p->failed = true;
			return false;
		}
		if (s->n)
			memcpy(np, s->p, s->n);
		s->p = np;
		s->cap = cap;
	}
	memcpy(s->p + s->n, src, n);
	s->n += n;
	return true;
}

static bool is_word_start(char c)
{
	return !is_digit(c) && c != '_';
}

/* Every plain identifier slice feeds the word table later identifiers may
 * refer to (Mangling.rst, "word substitutions"): a word starts at a letter
 * (or any non-digit, non-underscore) and ends before '_' or before an
 * uppercase letter that follows a non-uppercase one. */
static void record_words(sw_parser *p, const char *s, int n)
{
	int i = 0;
	while (i < n && p->nwords < 26) {
		while (i < n && !is_word_start(s[i]))
			i++;
		if (i >= n)
			break;
		int start = i++;
		while (i < n && s[i] != '_' && !(is_upper(s[i]) && !is_upper(s[i - 1])))
			i++;
		if (i - start >= 2) {
			p->words[p->nwords].p = s + start;
			p->words[p->nwords].n = (uint32_t)(i - start);
			p->nwords++;
		}
	}
}

static bool append_slice(sw_parser *p, sw_str *id, bool puny, const char *s, int n)
{
	if (!puny) {
		record_words(p, s, n);
		return str_append(p, id, s, (size_t)n);
	}
	if (n > SW_MAX_PUNYCODE)
		return false;
	size_t cap = 4 * (size_t)n + 4, out_len = 0;
	char *out = sw_alloc(p->arena, cap);
	if (!out || !sw_punycode_decode(s, (size_t)n, out, cap, &out_len))
		return false;
	return str_append(p, id, out, out_len);
}

static bool append_words(sw_parser *p, sw_str *id, bool *words)
{
	while (*words && (is_lower(sw_peek(p)) || is_upper(sw_peek(p)))) {
		char c = sw_next(p);
		int idx = is_lower(c) ? c - 'a' : c - 'A';
		if (is_upper(c))
			*words = false;
		if (idx >= p->nwords)
			return false;
		if (!str_append(p, id, p->words[idx].p, p->words[idx].n))
			return false;
	}
	return true;
}

/* The common case, one plain slice: the node points into the name. */
static sw_node *plain_identifier(sw_parser *p)
{
	int n = sw_natural(p);
	if (n <= 0 || (size_t)n > p->len - p->pos)
		return NULL;
	const char *s = p->text + p->pos;
	record_words(p, s, n);
	p->pos += (size_t)n;
	sw_node *nd = sw_new_text(p, SW_Identifier, s, (size_t)n);
	sw_add_subst(p, nd);
	return nd;
}

sw_node *sw_parse_identifier(sw_parser *p)
{
	bool words = false, puny = false;
	if (!is_digit(sw_peek(p)))
		return NULL;
	if (!sw_next_if(p, '0'))
		return plain_identifier(p);
	if (sw_next_if(p, '0'))
		puny = true;
	else
		words = true;
	sw_str id = {0};
	do {
		if (!append_words(p, &id, &words))
			return NULL;
		if (sw_next_if(p, '0'))
			break;
		int n = sw_natural(p);
		if (n <= 0)
			return NULL;
		if (puny)
			sw_next_if(p, '_');
		if ((size_t)n > p->len - p->pos)
			return NULL;
		if (!append_slice(p, &id, puny, p->text + p->pos, n))
			return NULL;
		p->pos += (size_t)n;
	} while (words);
	if (id.n == 0)
		return NULL;
	sw_node *nd = sw_new_text(p, SW_Identifier, id.p, id.n);
	sw_add_subst(p, nd);
	return nd;
}

static sw_node *operator_identifier(sw_parser *p)
{
	static const char table[] = "& @/= >    <*!|+?%-~   ^ .";
	sw_node *ident = sw_pop_kind(p, SW_Identifier);
	if (!ident)
		return NULL;
	char *op = sw_alloc(p->arena, ident->text_len + 1);
	if (!op)
		return NULL;
	for (uint32_t i = 0; i < ident->text_len; i++) {
		char c = ident->text[i];
		if ((unsigned char)c >= 0x80) {
			op[i] = c;
			continue;
		}
		if (!is_lower(c) || table[c - 'a'] == ' ')
			return NULL;
		op[i] = table[c - 'a'];
	}
	switch (sw_next(p)) {
	case 'i': return sw_new_text(p, SW_InfixOperator, op, ident->text_len);
	case 'p': return sw_new_text(p, SW_PrefixOperator, op, ident->text_len);
	case 'P': return sw_new_text(p, SW_PostfixOperator, op, ident->text_len);
	default: return NULL;
	}
}

static sw_node *local_identifier(sw_parser *p)
{
	if (sw_next_if(p, 'L')) {
		sw_node *disc = sw_pop_kind(p, SW_Identifier);
		sw_node *name = sw_pop_if(p, sw_is_decl_name);
		return sw_with2(p, SW_PrivateDeclName, disc, name);
	}
	if (sw_next_if(p, 'l'))
		return sw_with1(p, SW_PrivateDeclName, sw_pop_kind(p, SW_Identifier));
	char c = sw_peek(p);
	if ((c >= 'a' && c <= 'j') || (c >= 'A' && c <= 'J')) {
		sw_node *kind = sw_new_text(p, SW_Identifier, p->text + p->pos, 1);
		p->pos++;
		sw_node *name = sw_pop(p);
		sw_node *res = sw_new(p, SW_RelatedEntityDeclName);
		sw_add(p, res, kind);
		return sw_add_ok(p, res, name);
	}
	sw_node *disc = sw_index_node(p);
	sw_node *name = sw_pop_if(p, sw_is_decl_name);
	return sw_with2(p, SW_LocalDeclName, disc, name);
}

/* ---- contexts ---- */

sw_node *sw_pop_module(sw_parser *p)
{
	sw_node *id = sw_pop_kind(p, SW_Identifier);
	if (id)
		return sw_new_text(p, SW_Module, id->text, id->text_len);
	return sw_pop_kind(p, SW_Module);
}

sw_node *sw_pop_context(sw_parser *p)
{
	sw_node *mod = sw_pop_module(p);
	if (mod)
		return mod;
	sw_node *ty = sw_pop_kind(p, SW_Type);
	if (ty) {
		if (ty->nkids != 1 || !sw_is_context((sw_kind)ty->kids[0]->kind))
			return NULL;
		return ty->kids[0];
	}
	return sw_pop_if(p, sw_is_context);
}

sw_node *sw_pop_type_child(sw_parser *p)
{
	sw_node *ty = sw_pop_kind(p, SW_Type);
	return ty && ty->nkids == 1 ? ty->kids[0] : NULL;
}

static sw_node *any_generic_type(sw_parser *p, sw_kind kind)
{
	sw_node *name = sw_pop_if(p, sw_is_decl_name);
	sw_node *ctx = sw_pop_context(p);
	sw_node *ty = sw_type(p, sw_with2(p, kind, ctx, name));
	sw_add_subst(p, ty);
	return ty;
}

sw_node *sw_parse_any_generic_other(sw_parser *p)
{
	return any_generic_type(p, SW_OtherNominalType);
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

static sw_node *extension_context(sw_parser *p)
{
	sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
	sw_node *mod = sw_pop_module(p);
	sw_node *ty = sw_pop_type_child(p);
	if (!ty || !is_any_generic((sw_kind)ty->kind))
		return NULL;
	sw_node *ext = sw_with2(p, SW_Extension, mod, ty);
	if (sig)
		ext = sw_add_ok(p, ext, sig);
	return ext;
}

/* ---- entities ---- */

static sw_node *plain_function(sw_parser *p)
{
	sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
	sw_node *type = sw_pop_function_type(p, SW_FunctionType, false);
	sw_node *labels = sw_pop_labels(p, type);
	if (sig)
		type = sw_type(p, sw_with2(p, SW_DependentGenericType, sig, type));
	sw_node *name = sw_pop_if(p, sw_is_decl_name);
	sw_node *ctx = sw_pop_context(p);
	sw_node *fn = sw_with2(p, SW_Function, ctx, name);
	if (labels)
		sw_add(p, fn, labels);
	return sw_add_ok(p, fn, type);
}

static sw_node *entity(sw_parser *p, sw_kind kind)
{
	sw_node *type = sw_pop_kind(p, SW_Type);
	sw_node *labels = sw_pop_labels(p, type);
	sw_node *name = sw_pop_if(p, sw_is_decl_name);
	sw_node *ctx = sw_pop_context(p);
	sw_node *nd = sw_with2(p, kind, ctx, name);
	if (labels)
		nd = sw_add_ok(p, nd, labels);
	return sw_add_ok(p, nd, type);
}

struct accessor {
	char code;
	char sub;
	sw_kind kind;
};

static const struct accessor accessors[] = {
	{'m', 0, SW_MaterializeForSet},
	{'s', 0, SW_Setter},
	{'g', 0, SW_Getter},
	{'G', 0, SW_GlobalGetter},
	{'w', 0, SW_WillSet},
	{'W', 0, SW_DidSet},
	{'r', 0, SW_ReadAccessor},
	{'y', 0, SW_YieldingBorrowAccessor},
	{'M', 0, SW_ModifyAccessor},
	{'x', 0, SW_YieldingMutateAccessor},
	{'i', 0, SW_InitAccessor},
	{'b', 0, SW_BorrowAccessor},
	{'z', 0, SW_MutateAccessor},
	{'a', 'O', SW_OwningMutableAddressor},
	{'a', 'o', SW_NativeOwningMutableAddressor},
	{'a', 'P', SW_NativePinningMutableAddressor},
	{'a', 'u', SW_UnsafeMutableAddressor},
	{'l', 'O', SW_OwningAddressor},
	{'l', 'o', SW_NativeOwningAddressor},
	{'l', 'p', SW_NativePinningAddressor},
	{'l', 'u', SW_UnsafeAddressor},
};

static sw_node *accessor(sw_parser *p, sw_node *storage)
{
	char c = sw_next(p);
	if (c == 'p') /* the variable or subscript itself */
		return storage;
	char sub = (c == 'a' || c == 'l') ? sw_next(p) : 0;
	for (size_t i = 0; i < sizeof accessors / sizeof accessors[0]; i++)
		if (accessors[i].code == c && accessors[i].sub == sub)
			return sw_with1(p, accessors[i].kind, storage);
	return NULL;
}

static sw_node *subscript(sw_parser *p)
{
	sw_node *priv = sw_pop_kind(p, SW_PrivateDeclName);
	sw_node *type = sw_pop_kind(p, SW_Type);
	sw_node *labels = sw_pop_labels(p, type);
	sw_node *ctx = sw_pop_context(p);
	if (!type)
		return NULL;
	sw_node *sub = sw_add_ok(p, sw_new(p, SW_Subscript), ctx);
	if (labels)
		sw_add(p, sub, labels);
	sub = sw_add_ok(p, sub, type);
	if (priv)
		sw_add(p, sub, priv);
	return sub ? accessor(p, sub) : NULL;
}

enum fe_args { FE_NONE, FE_TYPE_PRIV, FE_TYPE_INDEX, FE_INDEX };

struct fn_entity {
	char code;
	enum fe_args args;
	sw_kind kind;
};

static const struct fn_entity fn_entities[] = {
	{'D', FE_NONE, SW_Deallocator},
	{'d', FE_NONE, SW_Destructor},
	{'Z', FE_NONE, SW_IsolatedDeallocator},
	{'E', FE_NONE, SW_IVarDestroyer},
	{'e', FE_NONE, SW_IVarInitializer},
	{'i', FE_NONE, SW_Initializer},
	{'C', FE_TYPE_PRIV, SW_Allocator},
	{'c', FE_TYPE_PRIV, SW_Constructor},
	{'U', FE_TYPE_INDEX, SW_ExplicitClosure},
	{'u', FE_TYPE_INDEX, SW_ImplicitClosure},
	{'A', FE_INDEX, SW_DefaultArgumentInitializer},
	{'P', FE_NONE, SW_PropertyWrapperBackingInitializer},
	{'F', FE_NONE, SW_PropertyWrappedFieldInitAccessor},
	{'W', FE_NONE, SW_PropertyWrapperInitFromProjectedValue},
};

static sw_node *function_entity_with(sw_parser *p, const struct fn_entity *fe)
{
	sw_node *name_or_index = NULL, *type = NULL, *labels = NULL;
	if (fe->args == FE_TYPE_PRIV) {
		name_or_index = sw_pop_kind(p, SW_PrivateDeclName);
		type = sw_pop_kind(p, SW_Type);
		labels = sw_pop_labels(p, type);
	} else if (fe->args == FE_TYPE_INDEX) {
		name_or_index = sw_index_node(p);
		type = sw_pop_kind(p, SW_Type);
	} else if (fe->args == FE_INDEX) {
		name_or_index = sw_index_node(p);
	}
	sw_node *ent = sw_with1(p, fe->kind, sw_pop_context(p));
	switch (fe->args) {
	case FE_NONE: break;
	case FE_INDEX: ent = sw_add_ok(p, ent, name_or_index); break;
	case FE_TYPE_PRIV:
		if (labels)
			sw_add(p, ent, labels);
		ent = sw_add_ok(p, ent, type);
		if (name_or_index)
			sw_add(p, ent, name_or_index);
		break;
	case FE_TYPE_INDEX:
		ent = sw_add_ok(p, ent, name_or_index);
		ent = sw_add_ok(p, ent, type);
		break;
	}
	return ent;
}

static sw_node *function_entity(sw_parser *p)
{
	char c = sw_next(p);
	switch (c) {
	case 'm': return entity(p, SW_Macro);
	case 'M': return sw_parse_macro_expansion(p);
	case 'p': return entity(p, SW_GenericTypeParamDecl);
	default: break;
	}
	for (size_t i = 0; i < sizeof fn_entities / sizeof fn_entities[0]; i++)
		if (fn_entities[i].code == c)
			return function_entity_with(p, &fn_entities[i]);
	return NULL;
}

/* ---- the operator dispatch ---- */

static sw_node *type_mangling(sw_parser *p)
{
	sw_node *type = sw_pop_kind(p, SW_Type);
	sw_node *labels = sw_pop_labels(p, type);
	sw_node *tm = sw_new(p, SW_TypeMangling);
	if (labels)
		sw_add(p, tm, labels);
	return sw_add_ok(p, tm, type);
}

static sw_node *operator_upper(sw_parser *p, char c)
{
	switch (c) {
	case 'A': return multi_substitution(p);
	case 'B': return sw_parse_builtin(p);
	case 'C': return any_generic_type(p, SW_Class);
	case 'D': return type_mangling(p);
	case 'E': return extension_context(p);
	case 'F': return plain_function(p);
	case 'G': return sw_parse_bound_generic(p);
	case 'H': return sw_parse_conformance_op(p);
	case 'I': return sw_parse_impl_function_type(p);
	case 'K': return sw_new(p, SW_ThrowsAnnotation);
	case 'L': return local_identifier(p);
	case 'M': return sw_parse_metatype(p);
	case 'N': return sw_with1(p, SW_TypeMetadata, sw_pop_kind(p, SW_Type));
	case 'O': return any_generic_type(p, SW_Enum);
	case 'P': return any_generic_type(p, SW_Protocol);
	case 'Q': return sw_parse_archetype(p);
	case 'R': return sw_parse_requirement(p);
	case 'S': return standard_substitution(p);
	case 'T': return sw_parse_thunk(p);
	case 'V': return any_generic_type(p, SW_Structure);
	case 'W': return sw_parse_witness(p);
	case 'X': return sw_parse_special_type(p);
	case 'Y': return sw_parse_type_annotation(p);
	case 'Z': return sw_with1(p, SW_Static, sw_pop_if(p, sw_is_entity));
	default: return NULL;
	}
}

static sw_node *wrap_type(sw_parser *p, sw_kind k)
{
	return sw_type(p, sw_with1(p, k, sw_pop_type_child(p)));
}

static sw_node *operator_lower(sw_parser *p, char c)
{
	switch (c) {
	case 'a': return any_generic_type(p, SW_TypeAlias);
	case 'c': return sw_pop_function_type(p, SW_FunctionType, false);
	case 'd': return sw_new(p, SW_VariadicMarker);
	case 'f': return function_entity(p);
	case 'g': return sw_parse_retroactive(p);
	case 'h': return wrap_type(p, SW_Shared);
	case 'i': return subscript(p);
	case 'l': return sw_parse_generic_signature(p, false);
	case 'm': return sw_type(p, sw_with1(p, SW_Metatype, sw_pop_kind(p, SW_Type)));
	case 'n': return wrap_type(p, SW_Owned);
	case 'o': return operator_identifier(p);
	case 'p': return sw_parse_protocol_list_type(p);
	case 'q': return sw_type(p, sw_generic_param_index(p));
	case 'r': return sw_parse_generic_signature(p, true);
	case 's': return sw_new_str(p, SW_Module, "Swift");
	case 't': return sw_pop_tuple(p);
	case 'u': {
		sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
		sw_node *ty = sw_pop_kind(p, SW_Type);
		return sw_type(p, sw_with2(p, SW_DependentGenericType, sig, ty));
	}
	case 'v': return accessor(p, entity(p, SW_Variable));
	case 'w': return sw_parse_value_witness(p);
	case 'x': return sw_type(p, sw_generic_param(p, 0, 0));
	case 'y': return sw_new(p, SW_EmptyList);
	case 'z': return wrap_type(p, SW_InOut);
	default: return NULL;
	}
}

sw_node *sw_parse_operator(sw_parser *p)
{
	char c = sw_next(p);
	if (is_upper(c))
		return operator_upper(p, c);
	if (is_lower(c))
		return operator_lower(p, c);
	switch (c) {
	case '_': return sw_new(p, SW_FirstElementMarker);
	case '.': {
		/* An unmangled suffix (".cold", ".123"): the rest of the name. */
		sw_node *nd = sw_new_text(p, SW_Suffix, p->text + p->pos - 1, p->len - p->pos + 1);
		p->pos = p->len;
		return nd;
	}
	case '$': return sw_parse_integer_type(p);
	default:
		if (!is_digit(c))
			return NULL;
		p->pos--;
		return sw_parse_identifier(p);
	}
}

/* ---- Punycode (Mangling.rst: RFC 3492 with '_' as delimiter and A-J as
 * the digits 26-35; code points D800+c stand for ASCII characters that are
 * not valid in a symbol) ---- */

static int puny_digit(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'J')
		return c - 'A' + 26;
	return -1;
}

static int puny_adapt(int delta, int numpoints, bool first)
{
	delta = first ? delta / 700 : delta / 2;
	delta += delta / numpoints;
	int k = 0;
	while (delta > ((36 - 1) * 26) / 2) {
		delta /= 36 - 1;
		k += 36;
	}
	return k + (((36 - 1 + 1) * delta) / (delta + 38));
}

/* One variable-length delta; false when malformed or overflowing. */
static bool puny_delta(const char **in, const char *end, int bias, int *i)
{
	int w = 1;
	for (int k = 36;; k += 36) {
		if (*in == end)
			return false;
		int digit = puny_digit(*(*in)++);
		if (digit < 0 || digit > (INT32_MAX - *i) / w)
			return false;
		*i += digit * w;
		int t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
		if (digit < t)
			return true;
		if (w > INT32_MAX / (36 - t))
			return false;
		w *= 36 - t;
	}
}

static size_t utf8_put(uint32_t s, char *out)
{
	/* Raw identifiers (`foo bar`) mangle their spaces as U+00A0. */
	if (s == 0xA0)
		s = ' ';
	if (s >= 0xD800 && s < 0xD880)
		s -= 0xD800;
	if (s < 0x80) {
		out[0] = (char)s;
		return 1;
	}
	if (s < 0x800) {
		out[0] = (char)(0xC0 | (s >> 6));
		out[1] = (char)(0x80 | (s & 0x3F));
		return 2;
	}
	if (s < 0x10000) {
		out[0] = (char)(0xE0 | (s >> 12));
		out[1] = (char)(0x80 | ((s >> 6) & 0x3F));
		out[2] = (char)(0x80 | (s & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (s >> 18));
	out[1] = (char)(0x80 | ((s >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((s >> 6) & 0x3F));
	out[3] = (char)(0x80 | (s & 0x3F));
	return 4;
}

static bool puny_to_utf8(const uint32_t *cp, size_t n, char *out, size_t cap, size_t *out_len)
{
	size_t o = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t s = cp[k];
		if (!(s < 0xD880 || (s >= 0xE000 && s <= 0x10FFFF)) || o + 4 > cap)
			return false;
		o += utf8_put(s, out + o);
	}
	*out_len = o;
	return true;
}

bool sw_punycode_decode(const char *in, size_t n, char *out, size_t cap, size_t *out_len)
{
	uint32_t cp[SW_MAX_PUNYCODE];
	size_t ncp = 0;
	const char *end = in + n, *delim = NULL;
	for (const char *q = in; q < end; q++)
		if (*q == '_')
			delim = q;
	if (delim) {
		for (const char *q = in; q < delim; q++) {
			if ((unsigned char)*q > 0x7f)
				return false;
			cp[ncp++] = (unsigned char)*q;
		}
		in = delim + 1;
	}
	uint32_t code = 128;
	int i = 0, bias = 72;
	while (in < end) {
		int oldi = i;
		if (!puny_delta(&in, end, bias, &i) || ncp >= SW_MAX_PUNYCODE)
			return false;
		bias = puny_adapt(i - oldi, (int)ncp + 1, oldi == 0);
		if ((uint32_t)(i / ((int)ncp + 1)) > INT32_MAX - code)
			return false;
		code += (uint32_t)(i / ((int)ncp + 1));
		i %= (int)ncp + 1;
		if (code < 0x80)
			return false;
		memmove(cp + i + 1, cp + i, (ncp - (size_t)i) * sizeof cp[0]);
		cp[i++] = code;
		ncp++;
	}
	return puny_to_utf8(cp, ncp, out, cap, out_len);
}
