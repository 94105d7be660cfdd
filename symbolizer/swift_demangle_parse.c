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

/* The kinds that name a declaration. */
const bool sw_decl_name_kinds[SW_KIND_COUNT] = {
	[SW_Identifier] = true,	     [SW_LocalDeclName] = true,
	[SW_PrivateDeclName] = true, [SW_RelatedEntityDeclName] = true,
	[SW_PrefixOperator] = true,  [SW_PostfixOperator] = true,
	[SW_InfixOperator] = true,
};

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

/* The standard types S<c>, and after Sc the concurrency ones, indexed by
 * their letter ('A'…'z'). */
struct std_type {
	sw_kind kind;
	const char *name;
	uint8_t len;
};

#define STD_NAME(s) s, sizeof(s) - 1
static const struct std_type std_types['z' - 'A' + 1] = {
	['A' - 'A'] = {SW_Structure, STD_NAME("AutoreleasingUnsafeMutablePointer")},
	['a' - 'A'] = {SW_Structure, STD_NAME("Array")},
	['b' - 'A'] = {SW_Structure, STD_NAME("Bool")},
	['D' - 'A'] = {SW_Structure, STD_NAME("Dictionary")},
	['d' - 'A'] = {SW_Structure, STD_NAME("Double")},
	['f' - 'A'] = {SW_Structure, STD_NAME("Float")},
	['h' - 'A'] = {SW_Structure, STD_NAME("Set")},
	['I' - 'A'] = {SW_Structure, STD_NAME("DefaultIndices")},
	['i' - 'A'] = {SW_Structure, STD_NAME("Int")},
	['J' - 'A'] = {SW_Structure, STD_NAME("Character")},
	['N' - 'A'] = {SW_Structure, STD_NAME("ClosedRange")},
	['n' - 'A'] = {SW_Structure, STD_NAME("Range")},
	['O' - 'A'] = {SW_Structure, STD_NAME("ObjectIdentifier")},
	['P' - 'A'] = {SW_Structure, STD_NAME("UnsafePointer")},
	['p' - 'A'] = {SW_Structure, STD_NAME("UnsafeMutablePointer")},
	['R' - 'A'] = {SW_Structure, STD_NAME("UnsafeBufferPointer")},
	['r' - 'A'] = {SW_Structure, STD_NAME("UnsafeMutableBufferPointer")},
	['S' - 'A'] = {SW_Structure, STD_NAME("String")},
	['s' - 'A'] = {SW_Structure, STD_NAME("Substring")},
	['u' - 'A'] = {SW_Structure, STD_NAME("UInt")},
	['V' - 'A'] = {SW_Structure, STD_NAME("UnsafeRawPointer")},
	['v' - 'A'] = {SW_Structure, STD_NAME("UnsafeMutableRawPointer")},
	['W' - 'A'] = {SW_Structure, STD_NAME("UnsafeRawBufferPointer")},
	['w' - 'A'] = {SW_Structure, STD_NAME("UnsafeMutableRawBufferPointer")},
	['q' - 'A'] = {SW_Enum, STD_NAME("Optional")},
	['B' - 'A'] = {SW_Protocol, STD_NAME("BinaryFloatingPoint")},
	['E' - 'A'] = {SW_Protocol, STD_NAME("Encodable")},
	['e' - 'A'] = {SW_Protocol, STD_NAME("Decodable")},
	['F' - 'A'] = {SW_Protocol, STD_NAME("FloatingPoint")},
	['G' - 'A'] = {SW_Protocol, STD_NAME("RandomNumberGenerator")},
	['H' - 'A'] = {SW_Protocol, STD_NAME("Hashable")},
	['j' - 'A'] = {SW_Protocol, STD_NAME("Numeric")},
	['K' - 'A'] = {SW_Protocol, STD_NAME("BidirectionalCollection")},
	['k' - 'A'] = {SW_Protocol, STD_NAME("RandomAccessCollection")},
	['L' - 'A'] = {SW_Protocol, STD_NAME("Comparable")},
	['l' - 'A'] = {SW_Protocol, STD_NAME("Collection")},
	['M' - 'A'] = {SW_Protocol, STD_NAME("MutableCollection")},
	['m' - 'A'] = {SW_Protocol, STD_NAME("RangeReplaceableCollection")},
	['Q' - 'A'] = {SW_Protocol, STD_NAME("Equatable")},
	['T' - 'A'] = {SW_Protocol, STD_NAME("Sequence")},
	['t' - 'A'] = {SW_Protocol, STD_NAME("IteratorProtocol")},
	['U' - 'A'] = {SW_Protocol, STD_NAME("UnsignedInteger")},
	['X' - 'A'] = {SW_Protocol, STD_NAME("RangeExpression")},
	['x' - 'A'] = {SW_Protocol, STD_NAME("Strideable")},
	['Y' - 'A'] = {SW_Protocol, STD_NAME("RawRepresentable")},
	['y' - 'A'] = {SW_Protocol, STD_NAME("StringProtocol")},
	['Z' - 'A'] = {SW_Protocol, STD_NAME("SignedInteger")},
	['z' - 'A'] = {SW_Protocol, STD_NAME("BinaryInteger")},
};

static const struct std_type std_concurrency_types['z' - 'A' + 1] = {
	['A' - 'A'] = {SW_Protocol, STD_NAME("Actor")},
	['C' - 'A'] = {SW_Structure, STD_NAME("CheckedContinuation")},
	['c' - 'A'] = {SW_Structure, STD_NAME("UnsafeContinuation")},
	['E' - 'A'] = {SW_Structure, STD_NAME("CancellationError")},
	['e' - 'A'] = {SW_Structure, STD_NAME("UnownedSerialExecutor")},
	['F' - 'A'] = {SW_Protocol, STD_NAME("Executor")},
	['f' - 'A'] = {SW_Protocol, STD_NAME("SerialExecutor")},
	['G' - 'A'] = {SW_Structure, STD_NAME("TaskGroup")},
	['g' - 'A'] = {SW_Structure, STD_NAME("ThrowingTaskGroup")},
	['h' - 'A'] = {SW_Protocol, STD_NAME("TaskExecutor")},
	['I' - 'A'] = {SW_Protocol, STD_NAME("AsyncIteratorProtocol")},
	['i' - 'A'] = {SW_Protocol, STD_NAME("AsyncSequence")},
	['J' - 'A'] = {SW_Structure, STD_NAME("UnownedJob")},
	['M' - 'A'] = {SW_Class, STD_NAME("MainActor")},
	['P' - 'A'] = {SW_Structure, STD_NAME("TaskPriority")},
	['S' - 'A'] = {SW_Structure, STD_NAME("AsyncStream")},
	['s' - 'A'] = {SW_Structure, STD_NAME("AsyncThrowingStream")},
	['T' - 'A'] = {SW_Structure, STD_NAME("Task")},
	['t' - 'A'] = {SW_Structure, STD_NAME("UnsafeCurrentTask")},
};

/* Sg (Optional<T>) names the type without a letter of its own. */
static const struct std_type std_optional = {SW_Enum, STD_NAME("Optional")};
#undef STD_NAME

static sw_node *swift_type(sw_parser *p, const struct std_type *st)
{
	return sw_type(p, sw_with2(p, st->kind, sw_new_str(p, SW_Module, "Swift"),
				   sw_new_text(p, SW_Identifier, st->name, st->len)));
}

static sw_node *standard_type(sw_parser *p, char code, bool concurrency)
{
	if (code < 'A' || code > 'z')
		return NULL;
	const struct std_type *st =
		concurrency ? &std_concurrency_types[code - 'A'] : &std_types[code - 'A'];
	return st->name ? swift_type(p, st) : NULL;
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
		sw_node *opt = sw_type(
			p, sw_with2(p, SW_BoundGenericEnum, swift_type(p, &std_optional), list));
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
	/* Nothing to add to a string that may have no buffer yet. */
	if (n == 0)
		return true;
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
static void split_words(sw_parser *p, const char *s, int n)
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

/* The words of every identifier recorded so far, in order. */
static void split_unsplit(sw_parser *p)
{
	for (int k = 0; k < p->nunsplit; k++)
		split_words(p, p->unsplit[k].p, p->unsplit[k].n);
	p->nunsplit = 0;
}

static void record_words(sw_parser *p, const char *s, int n)
{
	if (p->nunsplit == (int)(sizeof p->unsplit / sizeof p->unsplit[0]))
		split_unsplit(p);
	p->unsplit[p->nunsplit].p = s;
	p->unsplit[p->nunsplit].n = n;
	p->nunsplit++;
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
	split_unsplit(p);
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

/* An identifier with word substitutions (0…) or in Punycode (00…). */
__attribute__((noinline)) static sw_node *composite_identifier(sw_parser *p)
{
	bool words = false, puny = false;
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

sw_node *sw_parse_identifier(sw_parser *p)
{
	if (!is_digit(sw_peek(p)))
		return NULL;
	if (!sw_next_if(p, '0'))
		return plain_identifier(p);
	return composite_identifier(p);
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

static sw_node *wrap_type(sw_parser *p, sw_kind k)
{
	return sw_type(p, sw_with1(p, k, sw_pop_type_child(p)));
}

/* One function per operator character, so the dispatch is a table lookup
 * and each operator pays only for its own work. The operator character is
 * the one just read. */
static sw_node *op_nominal(sw_parser *p)
{
	switch (p->text[p->pos - 1]) {
	case 'C': return any_generic_type(p, SW_Class);
	case 'O': return any_generic_type(p, SW_Enum);
	case 'P': return any_generic_type(p, SW_Protocol);
	case 'V': return any_generic_type(p, SW_Structure);
	default: return any_generic_type(p, SW_TypeAlias);
	}
}

/* Operators that are a node of one kind and nothing else. */
static sw_node *op_marker(sw_parser *p)
{
	switch (p->text[p->pos - 1]) {
	case 'K': return sw_new(p, SW_ThrowsAnnotation);
	case 'd': return sw_new(p, SW_VariadicMarker);
	case 'y': return sw_new(p, SW_EmptyList);
	default: return sw_new(p, SW_FirstElementMarker);
	}
}

/* Operators that wrap the type on top of the stack. */
static sw_node *op_wrap(sw_parser *p)
{
	switch (p->text[p->pos - 1]) {
	case 'h': return wrap_type(p, SW_Shared);
	case 'n': return wrap_type(p, SW_Owned);
	case 'm': return sw_type(p, sw_with1(p, SW_Metatype, sw_pop_kind(p, SW_Type)));
	default: return wrap_type(p, SW_InOut);
	}
}

static sw_node *op_type_metadata(sw_parser *p)
{
	return sw_with1(p, SW_TypeMetadata, sw_pop_kind(p, SW_Type));
}

static sw_node *op_static(sw_parser *p)
{
	return sw_with1(p, SW_Static, sw_pop_if(p, sw_is_entity));
}

static sw_node *op_function_type(sw_parser *p)
{
	return sw_pop_function_type(p, SW_FunctionType, false);
}

static sw_node *op_generic_signature(sw_parser *p)
{
	return sw_parse_generic_signature(p, p->text[p->pos - 1] == 'r');
}

static sw_node *op_generic_param(sw_parser *p)
{
	return sw_type(p, sw_generic_param_index(p));
}

static sw_node *op_first_generic_param(sw_parser *p)
{
	return sw_type(p, sw_generic_param(p, 0, 0));
}

static sw_node *op_swift_module(sw_parser *p)
{
	return sw_new_str(p, SW_Module, "Swift");
}

static sw_node *op_dependent_generic_type(sw_parser *p)
{
	sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
	sw_node *ty = sw_pop_kind(p, SW_Type);
	return sw_type(p, sw_with2(p, SW_DependentGenericType, sig, ty));
}

static sw_node *op_variable(sw_parser *p)
{
	return accessor(p, entity(p, SW_Variable));
}

/* An unmangled suffix (".cold", ".123"): the rest of the name. */
static sw_node *op_suffix(sw_parser *p)
{
	sw_node *nd = sw_new_text(p, SW_Suffix, p->text + p->pos - 1, p->len - p->pos + 1);
	p->pos = p->len;
	return nd;
}

static sw_node *op_identifier(sw_parser *p)
{
	p->pos--;
	return sw_parse_identifier(p);
}

typedef sw_node *(*sw_op_fn)(sw_parser *p);

static const sw_op_fn operators[128] = {
	['A'] = multi_substitution,
	['B'] = sw_parse_builtin,
	['C'] = op_nominal,
	['D'] = type_mangling,
	['E'] = extension_context,
	['F'] = plain_function,
	['G'] = sw_parse_bound_generic,
	['H'] = sw_parse_conformance_op,
	['I'] = sw_parse_impl_function_type,
	['K'] = op_marker,
	['L'] = local_identifier,
	['M'] = sw_parse_metatype,
	['N'] = op_type_metadata,
	['O'] = op_nominal,
	['P'] = op_nominal,
	['Q'] = sw_parse_archetype,
	['R'] = sw_parse_requirement,
	['S'] = standard_substitution,
	['T'] = sw_parse_thunk,
	['V'] = op_nominal,
	['W'] = sw_parse_witness,
	['X'] = sw_parse_special_type,
	['Y'] = sw_parse_type_annotation,
	['Z'] = op_static,
	['a'] = op_nominal,
	['c'] = op_function_type,
	['d'] = op_marker,
	['f'] = function_entity,
	['g'] = sw_parse_retroactive,
	['h'] = op_wrap,
	['i'] = subscript,
	['l'] = op_generic_signature,
	['m'] = op_wrap,
	['n'] = op_wrap,
	['o'] = operator_identifier,
	['p'] = sw_parse_protocol_list_type,
	['q'] = op_generic_param,
	['r'] = op_generic_signature,
	['s'] = op_swift_module,
	['t'] = sw_pop_tuple,
	['u'] = op_dependent_generic_type,
	['v'] = op_variable,
	['w'] = sw_parse_value_witness,
	['x'] = op_first_generic_param,
	['y'] = op_marker,
	['z'] = op_wrap,
	['_'] = op_marker,
	['.'] = op_suffix,
	['$'] = sw_parse_integer_type,
	['0'] = op_identifier,
	['1'] = op_identifier,
	['2'] = op_identifier,
	['3'] = op_identifier,
	['4'] = op_identifier,
	['5'] = op_identifier,
	['6'] = op_identifier,
	['7'] = op_identifier,
	['8'] = op_identifier,
	['9'] = op_identifier,
};

sw_node *sw_parse_operator(sw_parser *p)
{
	unsigned char c = (unsigned char)sw_next(p);
	sw_op_fn op = c < 128 ? operators[c] : NULL;
	return op ? op(p) : NULL;
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
