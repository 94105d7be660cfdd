/*
 * swift_demangle_special.c — the Swift demangler's grammar for special types
 * (X…), SIL function types (I…), generic signatures and requirements (R…,
 * l, r), type annotations (Y…), value witnesses (w…), macro expansions
 * (fM…) and integer generic arguments ($…).
 */
#include "symbolizer/swift_demangle_internal.h"

#include <string.h>

/* ---- special types (X…) ---- */

static sw_node *metatype_repr(sw_parser *p)
{
	switch (sw_next(p)) {
	case 't': return sw_new_str(p, SW_MetatypeRepresentation, "@thin");
	case 'T': return sw_new_str(p, SW_MetatypeRepresentation, "@thick");
	case 'o': return sw_new_str(p, SW_MetatypeRepresentation, "@objc_metatype");
	default: return NULL;
	}
}

static sw_node *requirement_list(sw_parser *p);

static sw_node *sil_box_layout(sw_parser *p, bool generic)
{
	sw_node *sig = NULL, *args = NULL;
	if (generic) {
		sig = sw_pop_kind(p, SW_DependentGenericSignature);
		args = sig ? sw_pop_type_list(p) : NULL;
		if (!args)
			return NULL;
	}
	sw_node *fields = sw_pop_type_list(p);
	if (!fields)
		return NULL;
	sw_node *layout = sw_new(p, SW_SILBoxLayout);
	for (uint32_t i = 0; i < fields->nkids; i++) {
		sw_node *ft = fields->kids[i];
		bool mut = ft->nkids && ft->kids[0]->kind == SW_InOut;
		if (mut)
			ft = sw_type(p, sw_kid(ft->kids[0], 0));
		sw_add(p, layout,
		       sw_with1(p, mut ? SW_SILBoxMutableField : SW_SILBoxImmutableField, ft));
	}
	sw_node *box = sw_with1(p, SW_SILBoxTypeWithLayout, layout);
	if (sig) {
		sw_add(p, box, sig);
		sw_add(p, box, args);
	}
	return sw_type(p, box);
}

static sw_node *sugared(sw_parser *p)
{
	switch (sw_next(p)) {
	case 'q': return sw_type(p, sw_with1(p, SW_SugaredOptional, sw_pop_kind(p, SW_Type)));
	case 'a': return sw_type(p, sw_with1(p, SW_SugaredArray, sw_pop_kind(p, SW_Type)));
	case 'p': return sw_type(p, sw_with1(p, SW_SugaredParen, sw_pop_kind(p, SW_Type)));
	case 'A': {
		sw_node *elt = sw_pop_kind(p, SW_Type);
		sw_node *count = sw_pop_kind(p, SW_Type);
		return sw_type(p, sw_with2(p, SW_SugaredInlineArray, count, elt));
	}
	case 'D': {
		sw_node *value = sw_pop_kind(p, SW_Type);
		sw_node *key = sw_pop_kind(p, SW_Type);
		return sw_type(p, sw_with2(p, SW_SugaredDictionary, key, value));
	}
	default: return NULL;
	}
}

static sw_node *wrap_popped_type(sw_parser *p, sw_kind k)
{
	return sw_type(p, sw_with1(p, k, sw_pop_kind(p, SW_Type)));
}

static sw_node *special_misc(sw_parser *p, char c)
{
	switch (c) {
	case 'M':
	case 'm': {
		sw_node *repr = metatype_repr(p);
		sw_node *ty = sw_pop_kind(p, SW_Type);
		return sw_type(
			p, sw_with2(p, c == 'M' ? SW_Metatype : SW_ExistentialMetatype, repr, ty));
	}
	case 'P': {
		sw_node *reqs = requirement_list(p);
		sw_node *base = sw_pop_kind(p, SW_Type);
		return sw_type(p, sw_with2(p, SW_ConstrainedExistential, base, reqs));
	}
	case 'c': {
		sw_node *super = sw_pop_kind(p, SW_Type);
		sw_node *protos = sw_parse_protocol_list(p);
		return sw_type(p, sw_with2(p, SW_ProtocolListWithClass, protos, super));
	}
	case 'l':
		return sw_type(
			p, sw_with1(p, SW_ProtocolListWithAnyObject, sw_parse_protocol_list(p)));
	case 'X':
	case 'x': return sil_box_layout(p, c == 'X');
	case 'Z': {
		sw_node *types = sw_pop_type_list(p);
		sw_node *name = sw_pop_kind(p, SW_Identifier);
		sw_node *parent = sw_pop_context(p);
		sw_node *anon = sw_add_ok(p, sw_new(p, SW_AnonymousContext), name);
		anon = sw_add_ok(p, anon, parent);
		return sw_add_ok(p, anon, types);
	}
	case 'g':
	case 'G': {
		sw_node *type = sw_pop_kind(p, SW_Type);
		sw_node *sig = c == 'G' ? sw_pop_kind(p, SW_DependentGenericSignature) : NULL;
		if (sig)
			return sw_with2(p, SW_ExtendedExistentialTypeShape, sig, type);
		return sw_with1(p, SW_ExtendedExistentialTypeShape, type);
	}
	case 'e': return sw_type(p, sw_new(p, SW_ErrorType));
	case 'S': return sugared(p);
	default: return NULL;
	}
}

sw_node *sw_parse_special_type(sw_parser *p)
{
	char c = sw_next(p);
	switch (c) {
	case 'E': return sw_pop_function_type(p, SW_NoEscapeFunctionType, false);
	case 'A': return sw_pop_function_type(p, SW_EscapingAutoClosureType, false);
	case 'f': return sw_pop_function_type(p, SW_ThinFunctionType, false);
	case 'K': return sw_pop_function_type(p, SW_AutoClosureType, false);
	case 'U': return sw_pop_function_type(p, SW_UncurriedFunctionType, false);
	case 'L': return sw_pop_function_type(p, SW_EscapingObjCBlock, false);
	case 'B': return sw_pop_function_type(p, SW_ObjCBlock, false);
	case 'C': return sw_pop_function_type(p, SW_CFunctionPointer, false);
	case 'O': return sw_pop_function_type(p, SW_CalledOnceFunctionType, false);
	case 'z':
		switch (sw_next(p)) {
		case 'B': return sw_pop_function_type(p, SW_ObjCBlock, true);
		case 'C': return sw_pop_function_type(p, SW_CFunctionPointer, true);
		default: return NULL;
		}
	case 'o': return wrap_popped_type(p, SW_Unowned);
	case 'u': return wrap_popped_type(p, SW_Unmanaged);
	case 'w': return wrap_popped_type(p, SW_Weak);
	case 'b': return wrap_popped_type(p, SW_SILBoxType);
	case 'D': return wrap_popped_type(p, SW_DynamicSelf);
	case 'p': return wrap_popped_type(p, SW_ExistentialMetatype);
	case 'Y': return sw_parse_any_generic_other(p);
	default: return special_misc(p, c);
	}
}

/* ---- SIL function types (I…) ---- */

struct code_text {
	char code;
	const char *text;
};

static const struct code_text param_conventions[] = {
	{'i', "@in"},
	{'c', "@in_constant"},
	{'l', "@inout"},
	{'b', "@inout_aliasable"},
	{'n', "@in_guaranteed"},
	{'X', "@in_cxx"},
	{'x', "@owned"},
	{'g', "@guaranteed"},
	{'e', "@deallocating"},
	{'y', "@unowned"},
	{'v', "@pack_owned"},
	{'p', "@pack_guaranteed"},
	{'m', "@pack_inout"},
};

static const struct code_text result_conventions[] = {
	{'r', "@out"},
	{'o', "@owned"},
	{'d', "@unowned"},
	{'u', "@unowned_inner_pointer"},
	{'a', "@autoreleased"},
	{'k', "@pack_out"},
	{'l', "@guaranteed_address"},
	{'g', "@guaranteed"},
	{'m', "@inout"},
};

static sw_node *convention(sw_parser *p, sw_kind kind, const struct code_text *t, size_t n)
{
	char c = sw_peek(p);
	for (size_t i = 0; c && i < n; i++) {
		if (t[i].code == c) {
			p->pos++;
			return sw_with1(p, kind, sw_new_str(p, SW_ImplConvention, t[i].text));
		}
	}
	return NULL;
}

static sw_node *param_convention(sw_parser *p, sw_kind kind)
{
	return convention(p, kind, param_conventions,
			  sizeof param_conventions / sizeof param_conventions[0]);
}

static sw_node *result_convention(sw_parser *p, sw_kind kind)
{
	return convention(p, kind, result_conventions,
			  sizeof result_conventions / sizeof result_conventions[0]);
}

static sw_node *impl_substitutions(sw_parser *p, sw_kind kind)
{
	sw_vec lists = {0};
	sw_node *retro;
	if (!sw_bound_generics(p, &lists, &retro) || lists.n != 1)
		return NULL;
	sw_node *subs = sw_new(p, kind);
	if (kind == SW_ImplPatternSubstitutions) {
		sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
		if (!sig)
			return NULL;
		sw_add(p, subs, sig);
	}
	sw_add(p, subs, lists.v[0]);
	if (retro)
		sw_add(p, subs, retro);
	return subs;
}

static bool impl_callee(sw_parser *p, sw_node *type)
{
	static const struct code_text callee[] = {{'y', "@callee_unowned"},
						  {'g', "@callee_guaranteed"},
						  {'x', "@callee_owned"},
						  {'t', "@convention(thin)"}};
	char c = sw_next(p);
	for (size_t i = 0; i < sizeof callee / sizeof callee[0]; i++)
		if (callee[i].code == c)
			return sw_add(p, type, sw_new_str(p, SW_ImplConvention, callee[i].text));
	return false;
}

static const char *function_convention(sw_parser *p, bool *clang)
{
	switch (sw_next(p)) {
	case 'B': return "block";
	case 'C': return "c";
	case 'z':
		switch (sw_next(p)) {
		case 'B': *clang = true; return "block";
		case 'C': *clang = true; return "c";
		default: p->pos -= 2; return NULL;
		}
	case 'M': return "method";
	case 'O': return "objc_method";
	case 'K': return "closure";
	case 'W': return "witness_method";
	case 'V': return "com_method";
	default: p->pos--; return NULL;
	}
}

static sw_node *clang_type_here(sw_parser *p)
{
	int n = sw_natural(p);
	if (n <= 0 || (size_t)n > p->len - p->pos)
		return NULL;
	sw_node *nd = sw_new_text(p, SW_ClangType, p->text + p->pos, (size_t)n);
	p->pos += (size_t)n;
	return nd;
}

/* The attributes before the parameter list. */
static bool impl_attributes(sw_parser *p, sw_node *type)
{
	if (sw_next_if(p, 'e'))
		sw_add(p, type, sw_new(p, SW_ImplEscaping));
	if (sw_next_if(p, 'A'))
		sw_add(p, type, sw_new(p, SW_ImplErasedIsolation));
	if (sw_next_if(p, 'N'))
		sw_add(p, type, sw_new(p, SW_ImplNonisolatedNonsendingIsolation));
	char d = sw_peek(p);
	if (d == 'd' || d == 'l' || d == 'f' || d == 'r') {
		p->pos++;
		sw_add(p, type, sw_new_index(p, SW_ImplDifferentiabilityKind, (uint64_t)d));
	}
	if (!impl_callee(p, type))
		return false;
	bool clang = false;
	const char *conv = function_convention(p, &clang);
	if (conv) {
		sw_node *fc = sw_new(p, SW_ImplFunctionConvention);
		sw_add(p, fc, sw_new_str(p, SW_ImplFunctionConventionName, conv));
		if (clang)
			sw_add(p, fc, clang_type_here(p));
		sw_add(p, type, fc);
	}
	const char *coro = sw_next_if(p, 'A')	? "yield_once"
			   : sw_next_if(p, 'I') ? "yield_once_2"
			   : sw_next_if(p, 'G') ? "yield_many"
						: NULL;
	if (coro)
		sw_add(p, type, sw_new_str(p, SW_ImplCoroutineKind, coro));
	if (sw_next_if(p, 'h'))
		sw_add(p, type, sw_new_str(p, SW_ImplFunctionAttribute, "@Sendable"));
	if (sw_next_if(p, 'H'))
		sw_add(p, type, sw_new_str(p, SW_ImplFunctionAttribute, "@async"));
	if (sw_next_if(p, 'T'))
		sw_add(p, type, sw_new(p, SW_ImplSendingResult));
	return true;
}

static sw_node *param_flag(sw_parser *p, char c, sw_kind k, const char *text)
{
	return sw_next_if(p, c) ? sw_new_str(p, k, text) : NULL;
}

static sw_node *differentiability(sw_parser *p)
{
	return sw_new_str(p, SW_ImplParameterResultDifferentiability,
			  sw_next_if(p, 'w') ? "@noDerivative" : "");
}

/* Parameters, results, yields and the error result, then their types. */
static sw_node *impl_params(sw_parser *p, sw_node *type)
{
	int ntypes = 0;
	sw_node *prm;
	while ((prm = param_convention(p, SW_ImplParameter))) {
		type = sw_add_ok(p, type, prm);
		sw_add(p, prm, differentiability(p));
		sw_add(p, prm, param_flag(p, 'T', SW_ImplParameterSending, "sending"));
		sw_add(p, prm, param_flag(p, 'I', SW_ImplParameterIsolated, "isolated"));
		sw_add(p, prm,
		       param_flag(p, 'L', SW_ImplParameterImplicitLeading,
				  "sil_implicit_leading_param"));
		ntypes++;
	}
	while ((prm = result_convention(p, SW_ImplResult))) {
		type = sw_add_ok(p, type, prm);
		sw_add(p, prm, differentiability(p));
		ntypes++;
	}
	while (sw_next_if(p, 'Y')) {
		type = sw_add_ok(p, type, param_convention(p, SW_ImplYield));
		ntypes++;
	}
	if (sw_next_if(p, 'z')) {
		type = sw_add_ok(p, type, result_convention(p, SW_ImplErrorResult));
		ntypes++;
	}
	if (!type || !sw_next_if(p, '_'))
		return NULL;
	for (int i = 0; i < ntypes; i++) {
		sw_node *ty = sw_pop_kind(p, SW_Type);
		if (!ty || !sw_add(p, type->kids[type->nkids - (uint32_t)i - 1], ty))
			return NULL;
	}
	return sw_type(p, type);
}

sw_node *sw_parse_impl_function_type(sw_parser *p)
{
	sw_node *type = sw_new(p, SW_ImplFunctionType);
	if (sw_next_if(p, 's') &&
	    !sw_add(p, type, impl_substitutions(p, SW_ImplPatternSubstitutions)))
		return NULL;
	if (sw_next_if(p, 'I') &&
	    !sw_add(p, type, impl_substitutions(p, SW_ImplInvocationSubstitutions)))
		return NULL;
	sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
	if (sig && sw_next_if(p, 'P')) {
		sw_node *pseudo = sw_new(p, SW_DependentPseudogenericSignature);
		for (uint32_t i = 0; pseudo && i < sig->nkids; i++)
			sw_add(p, pseudo, sig->kids[i]);
		sig = pseudo;
	}
	if (!impl_attributes(p, type))
		return NULL;
	if (sig)
		sw_add(p, type, sig);
	return impl_params(p, type);
}

/* ---- generic signatures and requirements ---- */

static bool is_requirement(sw_kind k)
{
	switch (k) {
	case SW_DependentGenericParamPackMarker:
	case SW_DependentGenericParamValueMarker:
	case SW_DependentGenericSameTypeRequirement:
	case SW_DependentGenericSameShapeRequirement:
	case SW_DependentGenericLayoutRequirement:
	case SW_DependentGenericConformanceRequirement:
	case SW_DependentGenericInverseConformanceRequirement: return true;
	default: return false;
	}
}

static sw_node *requirement_list(sw_parser *p)
{
	sw_node *list = sw_new(p, SW_ConstrainedExistentialRequirementList);
	bool first;
	do {
		first = sw_pop_kind(p, SW_FirstElementMarker) != NULL;
		sw_node *req = sw_pop_if(p, is_requirement);
		if (!req || !sw_add(p, list, req))
			return NULL;
	} while (!first);
	sw_reverse(list, 0);
	return list;
}

sw_node *sw_parse_generic_signature(sw_parser *p, bool has_counts)
{
	sw_node *sig = sw_new(p, SW_DependentGenericSignature);
	if (!has_counts) {
		sw_add(p, sig, sw_new_index(p, SW_DependentGenericParamCount, 1));
	} else {
		while (!sw_next_if(p, 'l')) {
			int count = 0;
			if (!sw_next_if(p, 'z'))
				count = sw_index(p) + 1;
			if (count < 0)
				return NULL;
			sw_add(p, sig,
			       sw_new_index(p, SW_DependentGenericParamCount, (uint64_t)count));
		}
	}
	if (!sig)
		return NULL;
	uint32_t ncounts = sig->nkids;
	sw_node *req;
	while ((req = sw_pop_if(p, is_requirement)))
		sw_add(p, sig, req);
	sw_reverse(sig, ncounts);
	return sig;
}

enum req_type { RT_GENERIC, RT_ASSOC, RT_COMPOUND, RT_SUBST };
enum req_what { RQ_PROTOCOL, RQ_BASE, RQ_SAME, RQ_SHAPE, RQ_LAYOUT, RQ_PACK, RQ_INVERSE, RQ_VALUE };

struct req_code {
	char code;
	enum req_what what;
	enum req_type type;
};

static const struct req_code req_codes[] = {
	{'V', RQ_VALUE, RT_GENERIC},   {'v', RQ_PACK, RT_GENERIC},
	{'c', RQ_BASE, RT_ASSOC},      {'C', RQ_BASE, RT_COMPOUND},
	{'b', RQ_BASE, RT_GENERIC},    {'B', RQ_BASE, RT_SUBST},
	{'t', RQ_SAME, RT_ASSOC},      {'T', RQ_SAME, RT_COMPOUND},
	{'s', RQ_SAME, RT_GENERIC},    {'S', RQ_SAME, RT_SUBST},
	{'m', RQ_LAYOUT, RT_ASSOC},    {'M', RQ_LAYOUT, RT_COMPOUND},
	{'l', RQ_LAYOUT, RT_GENERIC},  {'L', RQ_LAYOUT, RT_SUBST},
	{'p', RQ_PROTOCOL, RT_ASSOC},  {'P', RQ_PROTOCOL, RT_COMPOUND},
	{'Q', RQ_PROTOCOL, RT_SUBST},  {'h', RQ_SHAPE, RT_GENERIC},
	{'i', RQ_INVERSE, RT_GENERIC}, {'I', RQ_INVERSE, RT_SUBST},
	{'j', RQ_INVERSE, RT_ASSOC},   {'J', RQ_INVERSE, RT_COMPOUND},
};

static sw_node *constrained_type(sw_parser *p, enum req_type t)
{
	sw_node *ty = NULL;
	switch (t) {
	case RT_GENERIC: return sw_type(p, sw_generic_param_index(p));
	case RT_ASSOC: ty = sw_assoc_simple(p, sw_generic_param_index(p)); break;
	case RT_COMPOUND: ty = sw_assoc_compound(p, sw_generic_param_index(p)); break;
	case RT_SUBST: return sw_pop_kind(p, SW_Type);
	}
	sw_add_subst(p, ty);
	return ty;
}

/* Layout constraints: one letter, some with a size and an alignment. */
static sw_node *layout_requirement(sw_parser *p, sw_node *ty)
{
	static const char codes[] = "URNCDTBAEeMmS";
	char c = sw_next(p);
	const char *at = c ? strchr(codes, c) : NULL;
	sw_node *size = NULL, *align = NULL;
	if (!at)
		return NULL;
	if (strchr("EeMmS", c)) {
		size = sw_index_node(p);
		if (!size)
			return NULL;
		if (c == 'E' || c == 'M')
			align = sw_index_node(p);
	}
	sw_node *name = sw_new_text(p, SW_Identifier, at, 1);
	sw_node *req = sw_with2(p, SW_DependentGenericLayoutRequirement, ty, name);
	if (size)
		req = sw_add_ok(p, req, size);
	if (align)
		req = sw_add_ok(p, req, align);
	return req;
}

sw_node *sw_parse_requirement(sw_parser *p)
{
	char c = sw_next(p);
	const struct req_code *rc = NULL;
	for (size_t i = 0; i < sizeof req_codes / sizeof req_codes[0]; i++)
		if (req_codes[i].code == c)
			rc = &req_codes[i];
	static const struct req_code plain = {0, RQ_PROTOCOL, RT_GENERIC};
	if (!rc) {
		if (c)
			p->pos--;
		rc = &plain;
	}
	sw_node *inverse = NULL;
	if (rc->what == RQ_INVERSE && !(inverse = sw_index_node(p)))
		return NULL;
	sw_node *ty = constrained_type(p, rc->type);
	switch (rc->what) {
	case RQ_VALUE:
		return sw_with2(p, SW_DependentGenericParamValueMarker, ty,
				sw_pop_kind(p, SW_Type));
	case RQ_PACK: return sw_with1(p, SW_DependentGenericParamPackMarker, ty);
	case RQ_PROTOCOL:
		return sw_with2(p, SW_DependentGenericConformanceRequirement, ty,
				sw_pop_protocol(p));
	case RQ_INVERSE:
		return sw_with2(p, SW_DependentGenericInverseConformanceRequirement, ty, inverse);
	case RQ_BASE:
		return sw_with2(p, SW_DependentGenericConformanceRequirement, ty,
				sw_pop_kind(p, SW_Type));
	case RQ_SAME:
		return sw_with2(p, SW_DependentGenericSameTypeRequirement, ty,
				sw_pop_kind(p, SW_Type));
	case RQ_SHAPE:
		return sw_with2(p, SW_DependentGenericSameShapeRequirement, ty,
				sw_pop_kind(p, SW_Type));
	case RQ_LAYOUT: return layout_requirement(p, ty);
	}
	return NULL;
}

/* ---- type annotations (Y…) ---- */

static sw_node *wrap_child(sw_parser *p, sw_kind k)
{
	return sw_type(p, sw_with1(p, k, sw_pop_type_child(p)));
}

sw_node *sw_parse_type_annotation(sw_parser *p)
{
	switch (sw_next(p)) {
	case 'a': return sw_new(p, SW_AsyncAnnotation);
	case 'A': return sw_new(p, SW_IsolatedAnyFunctionType);
	case 'b': return sw_new(p, SW_ConcurrentFunctionType);
	case 'c': return sw_with1(p, SW_GlobalActorFunctionType, sw_pop_type_child(p));
	case 'C': return sw_new(p, SW_NonIsolatedCallerFunctionType);
	case 'i': return wrap_child(p, SW_Isolated);
	case 'j': {
		char k = sw_next(p);
		if (k != 'f' && k != 'r' && k != 'd' && k != 'l')
			return NULL;
		return sw_new_index(p, SW_DifferentiableFunctionType, (uint64_t)(unsigned char)k);
	}
	case 'k': return wrap_child(p, SW_NoDerivative);
	case 'K': return sw_with1(p, SW_TypedThrowsAnnotation, sw_pop_type_child(p));
	case 't': return wrap_child(p, SW_CompileTimeLiteral);
	case 'g': return wrap_child(p, SW_ConstValue);
	case 'T': return sw_new(p, SW_SendingResultFunctionType);
	case 'u': return wrap_child(p, SW_Sending);
	default: return NULL;
	}
}

/* ---- value witnesses, macros, integers ---- */

/* Value witness codes, in the order the printer names them. */
static const char vw_codes[][3] = {"al", "ca", "ta", "de", "xx", "XX", "Xx", "CP",
				   "Cp", "cp", "Tk", "tk", "pr", "TK", "Cc", "Tt",
				   "tT", "xs", "xg", "ug", "up", "ui", "et", "st"};

sw_node *sw_parse_value_witness(sw_parser *p)
{
	char a = sw_next(p), b = sw_next(p);
	for (size_t i = 0; i < sizeof vw_codes / sizeof vw_codes[0]; i++) {
		if (vw_codes[i][0] == a && vw_codes[i][1] == b) {
			sw_node *vw = sw_new(p, SW_ValueWitness);
			sw_add(p, vw, sw_new_index(p, SW_Index, i));
			return sw_add_ok(p, vw, sw_pop_kind(p, SW_Type));
		}
	}
	return NULL;
}

static bool is_macro_expansion(sw_kind k)
{
	switch (k) {
	case SW_AccessorAttachedMacroExpansion:
	case SW_MemberAttributeAttachedMacroExpansion:
	case SW_FreestandingMacroExpansion:
	case SW_MemberAttachedMacroExpansion:
	case SW_PeerAttachedMacroExpansion:
	case SW_ConformanceAttachedMacroExpansion:
	case SW_ExtensionAttachedMacroExpansion:
	case SW_MacroExpansionLoc: return true;
	default: return false;
	}
}

static const struct {
	char code;
	sw_kind kind;
} attached_macros[] = {
	{'a', SW_AccessorAttachedMacroExpansion},
	{'r', SW_MemberAttributeAttachedMacroExpansion},
	{'m', SW_MemberAttachedMacroExpansion},
	{'p', SW_PeerAttachedMacroExpansion},
	{'c', SW_ConformanceAttachedMacroExpansion},
	{'e', SW_ExtensionAttachedMacroExpansion},
	{'q', SW_PreambleAttachedMacroExpansion},
	{'b', SW_BodyAttachedMacroExpansion},
};

static sw_node *macro_loc(sw_parser *p)
{
	int line = sw_index(p), col = sw_index(p);
	if (line < 0 || col < 0)
		return NULL;
	sw_node *buffer = sw_pop_kind(p, SW_Identifier);
	sw_node *module = sw_pop_kind(p, SW_Identifier);
	sw_node *nd = sw_with2(p, SW_MacroExpansionLoc, module, buffer);
	nd = sw_add_ok(p, nd, sw_new_index(p, SW_Index, (uint64_t)line));
	return sw_add_ok(p, nd, sw_new_index(p, SW_Index, (uint64_t)col));
}

sw_node *sw_parse_macro_expansion(sw_parser *p)
{
	char c = sw_next(p);
	sw_kind kind = SW_KIND_COUNT;
	bool attached = false;
	for (size_t i = 0; i < sizeof attached_macros / sizeof attached_macros[0]; i++)
		if (attached_macros[i].code == c)
			kind = attached_macros[i].kind, attached = true;
	if (c == 'f')
		kind = SW_FreestandingMacroExpansion;
	else if (c == 'u')
		kind = SW_MacroExpansionUniqueName;
	else if (c == 'X')
		return macro_loc(p);
	if (kind == SW_KIND_COUNT)
		return NULL;
	sw_node *name = sw_pop_kind(p, SW_Identifier);
	sw_node *priv = c == 'f' ? sw_pop_kind(p, SW_PrivateDeclName) : NULL;
	sw_node *attached_name = attached ? sw_pop_if(p, sw_is_decl_name) : NULL;
	sw_node *ctx = sw_pop_if(p, is_macro_expansion);
	if (!ctx)
		ctx = sw_pop_context(p);
	sw_node *disc = sw_index_node(p);
	sw_node *res;
	if (attached && attached_name)
		res = sw_add_ok(p, sw_with3(p, kind, ctx, attached_name, name), disc);
	else
		res = sw_with3(p, kind, ctx, name, disc);
	if (res && priv)
		sw_add(p, res, priv);
	return res;
}

sw_node *sw_parse_integer_type(sw_parser *p)
{
	bool neg = sw_next_if(p, 'n');
	int v = sw_index(p);
	if (v < 0)
		return NULL;
	sw_node *nd = sw_new_index(p, neg ? SW_NegativeInteger : SW_Integer, (uint64_t)v);
	return sw_type(p, nd);
}
