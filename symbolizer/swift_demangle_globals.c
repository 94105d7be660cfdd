/*
 * swift_demangle_globals.c — the Swift demangler's grammar for what is not a
 * plain declaration: thunks and specializations (T…), metadata (M…),
 * witnesses (W…), special types (X…), SIL function types (I…), generic
 * signatures and requirements, type annotations (Y…), macro expansions.
 */
#include "symbolizer/swift_demangle_internal.h"

#include <string.h>

/* ---- specializations ---- */

static sw_node *spec_attributes(sw_parser *p, sw_kind kind)
{
	sw_next_if(p, 'm');
	bool serialized = sw_next_if(p, 'q');
	bool async_removed = sw_next_if(p, 'a');
	bool repr_changed = sw_next_if(p, 'r');
	int pass = sw_next(p) - '0';
	if (pass < 0 || pass >= 10)
		return NULL;
	sw_node *spec = sw_new(p, kind);
	if (serialized)
		sw_add(p, spec, sw_new(p, SW_IsSerialized));
	if (async_removed)
		sw_add(p, spec, sw_new(p, SW_AsyncRemoved));
	if (repr_changed)
		sw_add(p, spec, sw_new(p, SW_RepresentationChanged));
	return sw_add_ok(p, spec, sw_new_index(p, SW_SpecializationPassID, (uint64_t)pass));
}

static sw_node *generic_specialization(sw_parser *p, sw_kind kind, sw_node *dropped)
{
	sw_node *spec = spec_attributes(p, kind);
	if (!spec)
		return NULL;
	for (uint32_t i = 0; dropped && i < dropped->nkids; i++)
		sw_add(p, spec, dropped->kids[i]);
	sw_node *list = sw_pop_type_list(p);
	if (!list)
		return NULL;
	for (uint32_t i = 0; i < list->nkids; i++)
		sw_add(p, spec, sw_with1(p, SW_GenericSpecializationParam, list->kids[i]));
	return spec;
}

static sw_node *specialization_with_dropped(sw_parser *p)
{
	p->pos--;
	sw_node *tmp = sw_new(p, SW_GenericSpecialization);
	while (sw_next_if(p, 't')) {
		int n = sw_natural(p);
		sw_add(p, tmp, sw_new_index(p, SW_DroppedArgument, n < 0 ? 0 : (uint64_t)n + 1));
	}
	switch (sw_next(p)) {
	case 'g': return generic_specialization(p, SW_GenericSpecialization, tmp);
	case 'G': return generic_specialization(p, SW_GenericSpecializationNotReAbstracted, tmp);
	case 'B': return generic_specialization(p, SW_GenericSpecializationInResilienceDomain, tmp);
	default: return NULL;
	}
}

static sw_node *param_kind(sw_parser *p, uint64_t v)
{
	return sw_new_index(p, SW_FunctionSignatureSpecializationParamKind, v);
}

static bool add_param_number(sw_parser *p, sw_node *param, uint64_t kind)
{
	sw_add(p, param, param_kind(p, kind));
	size_t start = p->pos;
	while (sw_peek(p) >= '0' && sw_peek(p) <= '9')
		p->pos++;
	if (p->pos == start)
		return false;
	return sw_add(p, param,
		      sw_new_text(p, SW_FunctionSignatureSpecializationParamPayload,
				  p->text + start, p->pos - start));
}

/* 'p…': constant propagation, possibly several constants for one param. */
static sw_node *const_prop_param(sw_parser *p, sw_node *param)
{
	for (;;) {
		char c = sw_next(p);
		switch (c) {
		case 'S': sw_add(p, param, param_kind(p, FSP_CONST_STRUCT)); break;
		case 'f': sw_add(p, param, param_kind(p, FSP_CONST_FUNCTION)); break;
		case 'g': sw_add(p, param, param_kind(p, FSP_CONST_GLOBAL)); break;
		case 'k': sw_add(p, param, param_kind(p, FSP_CONST_KEYPATH)); break;
		case 'i':
		case 'd':
			if (!add_param_number(p, param,
					      c == 'i' ? FSP_CONST_INTEGER : FSP_CONST_FLOAT))
				return NULL;
			break;
		case 's': {
			char e = sw_next(p);
			const char *enc = e == 'b'   ? "u8"
					  : e == 'w' ? "u16"
					  : e == 'c' ? "objc"
						     : 0;
			if (!enc)
				return NULL;
			sw_add(p, param, param_kind(p, FSP_CONST_STRING));
			sw_add(p, param,
			       sw_new_str(p, SW_FunctionSignatureSpecializationParamPayload, enc));
			break;
		}
		default:
			if (c)
				p->pos--;
			return param;
		}
	}
}

static uint64_t option_flags(sw_parser *p, uint64_t v, const char *opts)
{
	static const struct {
		char c;
		uint64_t bit;
	} flags[] = {{'D', FSP_DEAD},
		     {'G', FSP_OWNED_TO_GUARANTEED},
		     {'O', FSP_GUARANTEED_TO_OWNED},
		     {'X', FSP_SROA}};
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
		if (strchr(opts, flags[i].c) && sw_next_if(p, flags[i].c))
			v |= flags[i].bit;
	return v;
}

static sw_node *func_spec_param(sw_parser *p, sw_kind kind)
{
	sw_node *param = sw_new(p, kind);
	uint64_t v;
	switch (sw_next(p)) {
	case 'n': return param;
	case 'c': return sw_add_ok(p, param, param_kind(p, FSP_CLOSURE));
	case 'E': return sw_add_ok(p, param, param_kind(p, FSP_ESCAPING_CLOSURE));
	case 'C': {
		sw_add(p, param, param_kind(p, FSP_CLOSURE_PREV_ARG));
		int prev = sw_natural(p);
		if (prev < 0)
			return NULL;
		return sw_add_ok(p, param,
				 sw_new_index(p, SW_FunctionSignatureSpecializationParamPayload,
					      (uint64_t)prev));
	}
	case 'p': return const_prop_param(p, param);
	case 'e': v = option_flags(p, FSP_EXISTENTIAL_TO_GENERIC, "DGOX"); break;
	case 'd': v = option_flags(p, FSP_DEAD, "GOX"); break;
	case 'g': v = option_flags(p, FSP_OWNED_TO_GUARANTEED, "X"); break;
	case 'o': v = option_flags(p, FSP_GUARANTEED_TO_OWNED, "X"); break;
	case 'x': v = FSP_SROA; break;
	case 'i': v = FSP_BOX_TO_VALUE; break;
	case 's': v = FSP_BOX_TO_STACK; break;
	case 'r': v = FSP_INOUT_TO_OUT; break;
	default: return NULL;
	}
	return sw_add_ok(p, param, param_kind(p, v));
}

/* The payloads (types, identifiers) of a parameter come from the stack,
 * last parameter first. */
static bool fill_spec_param(sw_parser *p, sw_node *param)
{
	uint32_t fixed = param->nkids;
	sw_node *to_add = param;
	for (uint32_t ci = 0; ci < fixed; ci++) {
		sw_node *k = param->kids[fixed - ci - 1];
		if (k->kind != SW_FunctionSignatureSpecializationParamKind)
			continue;
		switch (k->index) {
		case FSP_CLOSURE:
		case FSP_ESCAPING_CLOSURE: {
			sw_node *ty;
			while ((ty = sw_pop_kind(p, SW_Type)))
				to_add = sw_add_ok(p, to_add, ty);
			break;
		}
		case FSP_CONST_KEYPATH:
			to_add = sw_add_ok(p, to_add, sw_pop_kind(p, SW_Type));
			to_add = sw_add_ok(p, to_add, sw_pop_kind(p, SW_Type));
			break;
		case FSP_CONST_STRUCT:
			to_add = sw_add_ok(p, to_add, sw_pop_kind(p, SW_Type));
			continue;
		case FSP_CONST_FUNCTION:
		case FSP_CONST_GLOBAL:
		case FSP_CONST_STRING: break;
		default: continue;
		}
		to_add = sw_add_ok(p, to_add, sw_pop_kind(p, SW_Identifier));
	}
	if (!to_add)
		return false;
	sw_reverse(param, fixed);
	return true;
}

static sw_node *function_specialization(sw_parser *p)
{
	sw_node *spec = spec_attributes(p, SW_FunctionSignatureSpecialization);
	if (spec && spec->kids[0]->kind == SW_RepresentationChanged)
		return spec;
	while (spec && !sw_next_if(p, '_')) {
		if (p->pos >= p->len)
			return NULL;
		spec = sw_add_ok(p, spec,
				 func_spec_param(p, SW_FunctionSignatureSpecializationParam));
	}
	if (!sw_next_if(p, 'n'))
		spec = sw_add_ok(p, spec,
				 func_spec_param(p, SW_FunctionSignatureSpecializationReturn));
	if (!spec)
		return NULL;
	for (uint32_t i = spec->nkids; i-- > 0;) {
		sw_node *param = spec->kids[i];
		if (param->kind == SW_FunctionSignatureSpecializationParam &&
		    !fill_spec_param(p, param))
			return NULL;
	}
	return spec;
}

/* ---- key path thunks ---- */

static sw_node *key_path_thunk(sw_parser *p, char c)
{
	sw_kind kind = c == 'K' ? SW_KeyPathGetterThunkHelper : SW_KeyPathSetterThunkHelper;
	if (sw_next_if_str(p, "mu"))
		kind = SW_KeyPathUnappliedMethodThunkHelper;
	else if (sw_next_if_str(p, "MA"))
		kind = SW_KeyPathAppliedMethodThunkHelper;
	bool serialized = sw_next_if(p, 'q');
	sw_vec types = {0};
	sw_node *nd = sw_pop(p);
	if (!nd || nd->kind != SW_Type)
		return NULL;
	do {
		if (!sw_vec_push(p->arena, &types, nd))
			return NULL;
		nd = sw_pop(p);
	} while (nd && nd->kind == SW_Type);
	if (!nd)
		return NULL;
	sw_node *res;
	if (nd->kind == SW_DependentGenericSignature)
		res = sw_with2(p, kind, sw_pop(p), nd);
	else
		res = sw_with1(p, kind, nd);
	for (size_t i = types.n; res && i-- > 0;)
		sw_add(p, res, types.v[i]);
	if (res && serialized)
		sw_add(p, res, sw_new(p, SW_IsSerialized));
	return res;
}

static sw_node *key_path_hash_thunk(sw_parser *p, char c)
{
	sw_kind kind = c == 'H' ? SW_KeyPathEqualsThunkHelper : SW_KeyPathHashThunkHelper;
	bool serialized = sw_next_if(p, 'q');
	sw_node *sig = NULL, *nd = sw_pop(p);
	sw_vec types = {0};
	if (!nd)
		return NULL;
	if (nd->kind == SW_DependentGenericSignature)
		sig = nd;
	else if (nd->kind != SW_Type || !sw_vec_push(p->arena, &types, nd))
		return NULL;
	while ((nd = sw_pop(p))) {
		if (nd->kind != SW_Type || !sw_vec_push(p->arena, &types, nd))
			return NULL;
	}
	sw_node *res = sw_new(p, kind);
	for (size_t i = types.n; res && i-- > 0;)
		sw_add(p, res, types.v[i]);
	if (sig)
		sw_add(p, res, sig);
	if (serialized)
		sw_add(p, res, sw_new(p, SW_IsSerialized));
	return res;
}

/* ---- autodiff ---- */

static sw_node *autodiff_kind(sw_parser *p)
{
	char k = sw_next(p);
	if (k != 'f' && k != 'r' && k != 'd' && k != 'p')
		return NULL;
	return sw_new_index(p, SW_AutoDiffFunctionKind, (uint64_t)(unsigned char)k);
}

sw_node *sw_parse_index_subset(sw_parser *p)
{
	size_t start = p->pos;
	while (sw_peek(p) == 'S' || sw_peek(p) == 'U')
		p->pos++;
	if (p->pos == start)
		return NULL;
	return sw_new_text(p, SW_IndexSubset, p->text + start, p->pos - start);
}

/* Everything on the stack, in order, then kind and index subsets. */
static sw_node *autodiff_function(sw_parser *p, sw_kind kind, bool subset_thunk)
{
	sw_node *res = sw_new(p, kind), *nd;
	while (res && (nd = sw_pop(p)))
		res = sw_add_ok(p, res, nd);
	sw_reverse(res, 0);
	res = sw_add_ok(p, res, autodiff_kind(p));
	res = sw_add_ok(p, res, sw_parse_index_subset(p));
	if (!sw_next_if(p, 'p'))
		return NULL;
	res = sw_add_ok(p, res, sw_parse_index_subset(p));
	if (!sw_next_if(p, 'r'))
		return NULL;
	if (subset_thunk) {
		res = sw_add_ok(p, res, sw_parse_index_subset(p));
		if (!sw_next_if(p, 'P'))
			return NULL;
	}
	return res;
}

static sw_node *autodiff_thunk(sw_parser *p)
{
	switch (sw_peek(p)) {
	case 'S': p->pos++; return autodiff_function(p, SW_AutoDiffSubsetParametersThunk, true);
	case 'O': {
		p->pos++;
		sw_node *res = sw_new(p, SW_AutoDiffSelfReorderingReabstractionThunk);
		sw_add(p, res, sw_pop_kind(p, SW_DependentGenericSignature));
		res = sw_add_ok(p, res, sw_pop_kind(p, SW_Type));
		res = sw_add_ok(p, res, sw_pop_kind(p, SW_Type));
		sw_reverse(res, 0);
		return sw_add_ok(p, res, autodiff_kind(p));
	}
	case 'V': p->pos++; return autodiff_function(p, SW_AutoDiffDerivativeVTableThunk, false);
	default: return autodiff_function(p, SW_AutoDiffFunction, false);
	}
}

/* ---- thunks ---- */

static sw_node *reabstraction_thunk(sw_parser *p, char c)
{
	sw_kind kind = c == 'R'	  ? SW_ReabstractionThunkHelper
		       : c == 'y' ? SW_ReabstractionThunkHelperWithSelf
				  : SW_ReabstractionThunk;
	sw_node *thunk = sw_new(p, kind);
	sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
	if (sig)
		sw_add(p, thunk, sig);
	if (kind == SW_ReabstractionThunkHelperWithSelf)
		sw_add(p, thunk, sw_pop_kind(p, SW_Type));
	sw_add(p, thunk, sw_pop_kind(p, SW_Type));
	sw_add(p, thunk, sw_pop_kind(p, SW_Type));
	return thunk;
}

static sw_node *objc_completion(sw_parser *p, char c)
{
	sw_node *flag = sw_index_node(p);
	sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
	sw_node *result = sw_pop_kind(p, SW_Type);
	sw_node *impl = sw_pop_kind(p, SW_Type);
	sw_node *nd = sw_with3(p,
			       c == 'z' ? SW_ObjCAsyncCompletionHandlerImpl
					: SW_CheckedObjCAsyncCompletionHandlerImpl,
			       impl, result, flag);
	if (nd && sig)
		sw_add(p, nd, sig);
	return nd;
}

static sw_node *bridged_method(sw_parser *p)
{
	size_t start = p->pos;
	char k = sw_next(p);
	if (k != 'o' && k != 'p' && k != 'a' && k != 'm')
		return NULL;
	for (;;) {
		char c = sw_next(p);
		if (c == '_')
			break;
		if (c != 'n' && c != 'b' && c != 'g')
			return NULL;
	}
	return sw_new_text(p, SW_OutlinedBridgedMethod, p->text + start, p->pos - start - 1);
}

static sw_node *witness_thunk(sw_parser *p, char c)
{
	switch (c) {
	case 'V': {
		sw_node *base = sw_pop_if(p, sw_is_entity);
		sw_node *derived = sw_pop_if(p, sw_is_entity);
		return sw_with2(p, SW_VTableThunk, derived, base);
	}
	case 'W': {
		sw_node *ent = sw_pop_if(p, sw_is_entity);
		sw_node *conf = sw_pop_conformance(p);
		return sw_with2(p, SW_ProtocolWitness, conf, ent);
	}
	case 'S': return sw_with1(p, SW_ProtocolSelfConformanceWitness, sw_pop_if(p, sw_is_entity));
	case 'l': return sw_with1(p, SW_AssociatedTypeDescriptor, sw_pop_assoc_type_name(p));
	case 'L': return sw_with1(p, SW_ProtocolRequirementsBaseDescriptor, sw_pop_protocol(p));
	case 'M':
		return sw_with1(p, SW_DefaultAssociatedTypeMetadataAccessor,
				sw_pop_assoc_type_name(p));
	case 'b': {
		sw_node *req = sw_pop_protocol(p);
		sw_node *proto = sw_pop_kind(p, SW_Type);
		return sw_with2(p, SW_BaseConformanceDescriptor, proto, req);
	}
	default: return NULL;
	}
}

/* Tn / TN: the subject is an associated type path or, since Swift 6.4, a
 * generic parameter. */
static sw_node *assoc_conformance_thunk(sw_parser *p, char c)
{
	sw_node *req = sw_pop_protocol(p);
	sw_node *path = NULL;
	if (p->stack.n && p->stack.v[p->stack.n - 1]->kind == SW_Type &&
	    sw_kid(p->stack.v[p->stack.n - 1], 0) &&
	    p->stack.v[p->stack.n - 1]->kids[0]->kind == SW_DependentGenericParamType)
		path = sw_pop(p);
	else
		path = sw_pop_assoc_type_path(p);
	sw_node *proto = sw_pop_kind(p, SW_Type);
	return sw_with3(p,
			c == 'n' ? SW_AssociatedConformanceDescriptor
				 : SW_DefaultAssociatedConformanceAccessor,
			proto, path, req);
}

struct simple_op {
	char code;
	sw_kind kind;
};

/* Thunk letters that only mark what the symbol below them is. */
static const struct simple_op thunk_markers[] = {
	{'o', SW_ObjCAttribute},
	{'O', SW_NonObjCAttribute},
	{'D', SW_DynamicAttribute},
	{'d', SW_DirectMethodReferenceAttribute},
	{'E', SW_DistributedThunk},
	{'F', SW_DistributedAccessor},
	{'a', SW_PartialApplyObjCForwarder},
	{'A', SW_PartialApplyForwarder},
	{'m', SW_MergedFunction},
	{'X', SW_DynamicallyReplaceableFunctionVar},
	{'x', SW_DynamicallyReplaceableFunctionKey},
	{'I', SW_DynamicallyReplaceableFunctionImpl},
	{'u', SW_AsyncFunctionPointer},
};

/* Thunks that wrap the entity below them. */
static const struct simple_op thunk_wrappers[] = {
	{'c', SW_CurryThunk},
	{'j', SW_DispatchThunk},
	{'q', SW_MethodDescriptor},
};

static sw_node *thunk_more(sw_parser *p, char c)
{
	switch (c) {
	case 'T':
		if (sw_next(p) != 'I')
			return NULL;
		return sw_with1(p, SW_SILThunkIdentity, sw_pop_if(p, sw_is_entity));
	case 'Y':
	case 'Q':
		return sw_with1(p,
				c == 'Q' ? SW_AsyncAwaitResumePartialFunction
					 : SW_AsyncSuspendResumePartialFunction,
				sw_index_node(p));
	case 'C': return sw_with1(p, SW_CoroutineContinuationPrototype, sw_pop_kind(p, SW_Type));
	case 'z':
	case 'Z': return objc_completion(p, c);
	case 'R':
	case 'r':
	case 'y': return reabstraction_thunk(p, c);
	case 'g': return generic_specialization(p, SW_GenericSpecialization, NULL);
	case 'G': return generic_specialization(p, SW_GenericSpecializationNotReAbstracted, NULL);
	case 'B':
		return generic_specialization(p, SW_GenericSpecializationInResilienceDomain, NULL);
	case 't': return specialization_with_dropped(p);
	case 's': return generic_specialization(p, SW_GenericSpecializationPrespecialized, NULL);
	case 'i': return generic_specialization(p, SW_InlinedGenericFunction, NULL);
	case 'p':
	case 'P': {
		sw_node *spec = spec_attributes(
			p, c == 'p' ? SW_GenericPartialSpecialization
				    : SW_GenericPartialSpecializationNotReAbstracted);
		sw_node *param =
			sw_with1(p, SW_GenericSpecializationParam, sw_pop_kind(p, SW_Type));
		return sw_add_ok(p, spec, param);
	}
	case 'f': return function_specialization(p);
	case 'K':
	case 'k': return key_path_thunk(p, c);
	case 'H':
	case 'h': return key_path_hash_thunk(p, c);
	case 'n':
	case 'N': return assoc_conformance_thunk(p, c);
	default: return witness_thunk(p, c);
	}
}

static sw_node *thunk_w(sw_parser *p)
{
	switch (sw_next(p)) {
	case 'b': return sw_new(p, SW_BackDeploymentThunk);
	case 'B': return sw_new(p, SW_BackDeploymentFallback);
	case 'c': return sw_new(p, SW_CoroFunctionPointer);
	case 'd': return sw_new(p, SW_DefaultOverride);
	case 'S': return sw_new(p, SW_HasSymbolQuery);
	default: return NULL;
	}
}

sw_node *sw_parse_thunk(sw_parser *p)
{
	char c = sw_next(p);
	for (size_t i = 0; i < sizeof thunk_markers / sizeof thunk_markers[0]; i++)
		if (thunk_markers[i].code == c)
			return sw_new(p, thunk_markers[i].kind);
	for (size_t i = 0; i < sizeof thunk_wrappers / sizeof thunk_wrappers[0]; i++)
		if (thunk_wrappers[i].code == c)
			return sw_with1(p, thunk_wrappers[i].kind, sw_pop_if(p, sw_is_entity));
	switch (c) {
	case 'v': {
		int idx = sw_index(p);
		if (idx < 0)
			return NULL;
		bool ro = sw_peek(p) == 'r';
		sw_next(p);
		return sw_new_index(p, ro ? SW_OutlinedReadOnlyObject : SW_OutlinedVariable,
				    (uint64_t)idx);
	}
	case 'e': return bridged_method(p);
	case 'U': {
		sw_node *actor = sw_pop_kind(p, SW_Type);
		sw_node *reab = actor ? sw_pop(p) : NULL;
		return sw_with2(p, SW_ReabstractionThunkHelperWithGlobalActor, reab, actor);
	}
	case 'J': return autodiff_thunk(p);
	case 'w': return thunk_w(p);
	default: return thunk_more(p, c);
	}
}

/* ---- metadata (M…) ---- */

enum pop_how { POP_TYPE, POP_ANY, POP_PROTOCOL, POP_CONFORMANCE, POP_ENTITY };

struct meta_op {
	char code;
	enum pop_how how;
	sw_kind kind;
};

static const struct meta_op meta_ops[] = {
	{'a', POP_TYPE, SW_TypeMetadataAccessFunction},
	{'A', POP_CONFORMANCE, SW_ReflectionMetadataAssocTypeDescriptor},
	{'b', POP_TYPE, SW_CanonicalSpecializedGenericTypeMetadataAccessFunction},
	{'B', POP_TYPE, SW_ReflectionMetadataBuiltinDescriptor},
	{'c', POP_CONFORMANCE, SW_ProtocolConformanceDescriptor},
	{'D', POP_TYPE, SW_TypeMetadataDemanglingCache},
	{'f', POP_TYPE, SW_FullTypeMetadata},
	{'F', POP_TYPE, SW_ReflectionMetadataFieldDescriptor},
	{'g', POP_ANY, SW_OpaqueTypeDescriptorAccessor},
	{'h', POP_ANY, SW_OpaqueTypeDescriptorAccessorImpl},
	{'i', POP_TYPE, SW_TypeMetadataInstantiationFunction},
	{'I', POP_TYPE, SW_TypeMetadataInstantiationCache},
	{'j', POP_ANY, SW_OpaqueTypeDescriptorAccessorKey},
	{'J', POP_ANY, SW_NoncanonicalSpecializedGenericTypeMetadataCache},
	{'k', POP_ANY, SW_OpaqueTypeDescriptorAccessorVar},
	{'K', POP_ANY, SW_MetadataInstantiationCache},
	{'l', POP_TYPE, SW_TypeMetadataSingletonInitializationCache},
	{'L', POP_TYPE, SW_TypeMetadataLazyCache},
	{'m', POP_TYPE, SW_Metaclass},
	{'M', POP_TYPE, SW_CanonicalSpecializedGenericMetaclass},
	{'n', POP_TYPE, SW_NominalTypeDescriptor},
	{'N', POP_TYPE, SW_NoncanonicalSpecializedGenericTypeMetadata},
	{'o', POP_TYPE, SW_ClassMetadataBaseOffset},
	{'p', POP_PROTOCOL, SW_ProtocolDescriptor},
	{'P', POP_TYPE, SW_GenericTypeMetadataPattern},
	{'q', POP_ANY, SW_Uniquable},
	{'Q', POP_ANY, SW_OpaqueTypeDescriptor},
	{'r', POP_TYPE, SW_TypeMetadataCompletionFunction},
	{'s', POP_TYPE, SW_ObjCResilientClassStub},
	{'S', POP_PROTOCOL, SW_ProtocolSelfConformanceDescriptor},
	{'t', POP_TYPE, SW_FullObjCResilientClassStub},
	{'u', POP_TYPE, SW_MethodLookupFunction},
	{'U', POP_TYPE, SW_ObjCMetadataUpdateFunction},
	{'V', POP_ENTITY, SW_PropertyDescriptor},
	{'z', POP_TYPE, SW_CanonicalPrespecializedGenericTypeCachingOnceToken},
};

static sw_node *pop_how(sw_parser *p, enum pop_how how)
{
	switch (how) {
	case POP_TYPE: return sw_pop_kind(p, SW_Type);
	case POP_ANY: return sw_pop(p);
	case POP_PROTOCOL: return sw_pop_protocol(p);
	case POP_CONFORMANCE: return sw_pop_conformance(p);
	case POP_ENTITY: return sw_pop_if(p, sw_is_entity);
	}
	return NULL;
}

static sw_node *private_context_descriptor(sw_parser *p)
{
	switch (sw_next(p)) {
	case 'E': return sw_with1(p, SW_ExtensionDescriptor, sw_pop_context(p));
	case 'M': return sw_with1(p, SW_ModuleDescriptor, sw_pop_module(p));
	case 'Y': {
		sw_node *disc = sw_pop(p);
		sw_node *ctx = disc ? sw_pop_context(p) : NULL;
		return sw_with2(p, SW_AnonymousDescriptor, ctx, disc);
	}
	case 'X': return sw_with1(p, SW_AnonymousDescriptor, sw_pop_context(p));
	case 'A': {
		sw_node *path = sw_pop_assoc_type_path(p);
		sw_node *base = path ? sw_pop_kind(p, SW_Type) : NULL;
		return sw_with2(p, SW_AssociatedTypeGenericParamRef, base, path);
	}
	default: return NULL;
	}
}

sw_node *sw_parse_metatype(sw_parser *p)
{
	char c = sw_next(p);
	if (c == 'X')
		return private_context_descriptor(p);
	if (c == 'C') {
		sw_node *ty = sw_pop_kind(p, SW_Type);
		sw_node *k = sw_kid(ty, 0);
		switch (k ? k->kind : SW_KIND_COUNT) {
		case SW_Structure:
		case SW_Class:
		case SW_Enum:
		case SW_Protocol:
		case SW_OtherNominalType:
		case SW_TypeAlias:
		case SW_BuiltinTupleType:
			return sw_with1(p, SW_ReflectionMetadataSuperclassDescriptor, k);
		default: return NULL;
		}
	}
	for (size_t i = 0; i < sizeof meta_ops / sizeof meta_ops[0]; i++)
		if (meta_ops[i].code == c)
			return sw_with1(p, meta_ops[i].kind, pop_how(p, meta_ops[i].how));
	return NULL;
}

/* ---- witnesses (W…) ---- */

static const struct simple_op conformance_witnesses[] = {
	{'P', SW_ProtocolWitnessTable},
	{'p', SW_ProtocolWitnessTablePattern},
	{'G', SW_GenericProtocolWitnessTable},
	{'I', SW_GenericProtocolWitnessTableInstantiationFunction},
	{'r', SW_ResilientProtocolWitnessTable},
	{'a', SW_ProtocolWitnessTableAccessor},
};

/* Outlined value operations: WO<c>, on a type and maybe a signature. */
static const struct simple_op outlined_ops[] = {
	{'B', SW_OutlinedInitializeWithTakeNoValueWitness},
	{'C', SW_OutlinedInitializeWithCopyNoValueWitness},
	{'D', SW_OutlinedAssignWithTakeNoValueWitness},
	{'F', SW_OutlinedAssignWithCopyNoValueWitness},
	{'H', SW_OutlinedDestroyNoValueWitness},
	{'y', SW_OutlinedCopy},
	{'e', SW_OutlinedConsume},
	{'r', SW_OutlinedRetain},
	{'s', SW_OutlinedRelease},
	{'b', SW_OutlinedInitializeWithTake},
	{'c', SW_OutlinedInitializeWithCopy},
	{'d', SW_OutlinedAssignWithTake},
	{'f', SW_OutlinedAssignWithCopy},
	{'h', SW_OutlinedDestroy},
	{'g', SW_OutlinedEnumGetTag},
	{'i', SW_OutlinedEnumTagStore},
	{'j', SW_OutlinedEnumProjectDataForLoad},
};

static sw_node *outlined(sw_parser *p)
{
	char c = sw_next(p);
	for (size_t i = 0; i < sizeof outlined_ops / sizeof outlined_ops[0]; i++) {
		if (outlined_ops[i].code != c)
			continue;
		sw_node *idx = (c == 'i' || c == 'j') ? sw_index_node(p) : NULL;
		sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
		sw_node *nd = sw_with1(p, outlined_ops[i].kind, sw_pop_kind(p, SW_Type));
		if (sig)
			nd = sw_add_ok(p, nd, sig);
		if (c == 'i' || c == 'j')
			nd = sw_add_ok(p, nd, idx);
		return nd;
	}
	return NULL;
}

static sw_node *global_once(sw_parser *p, char c)
{
	sw_node *decls = sw_new(p, SW_GlobalVariableOnceDeclList);
	sw_vec vars = {0};
	while (sw_pop_kind(p, SW_FirstElementMarker)) {
		sw_node *id = sw_pop_if(p, sw_is_decl_name);
		if (!id || !sw_vec_push(p->arena, &vars, id))
			return NULL;
	}
	for (size_t i = vars.n; i-- > 0;)
		sw_add(p, decls, vars.v[i]);
	sw_node *ctx = sw_pop_context(p);
	return sw_with2(p, c == 'Z' ? SW_GlobalVariableOnceFunction : SW_GlobalVariableOnceToken,
			ctx, decls);
}

static sw_node *differentiability_witness(sw_parser *p)
{
	sw_node *res = sw_new(p, SW_DifferentiabilityWitness), *nd;
	sw_node *sig = sw_pop_kind(p, SW_DependentGenericSignature);
	while (res && (nd = sw_pop(p)))
		res = sw_add_ok(p, res, nd);
	sw_reverse(res, 0);
	char k = sw_next(p);
	if (k != 'f' && k != 'r' && k != 'd' && k != 'l')
		return NULL;
	res = sw_add_ok(p, res, sw_new_index(p, SW_Index, (uint64_t)(unsigned char)k));
	res = sw_add_ok(p, res, sw_parse_index_subset(p));
	if (!sw_next_if(p, 'p'))
		return NULL;
	res = sw_add_ok(p, res, sw_parse_index_subset(p));
	if (!sw_next_if(p, 'r'))
		return NULL;
	if (res && sig)
		sw_add(p, res, sig);
	return res;
}

static sw_node *witness_accessor(sw_parser *p, char c)
{
	switch (c) {
	case 'l':
	case 'L': {
		sw_node *conf = sw_pop_conformance(p);
		sw_node *type = sw_pop_kind(p, SW_Type);
		return sw_with2(p,
				c == 'l' ? SW_LazyProtocolWitnessTableAccessor
					 : SW_LazyProtocolWitnessTableCacheVariable,
				type, conf);
	}
	case 't': {
		sw_node *name = sw_pop_if(p, sw_is_decl_name);
		sw_node *conf = sw_pop_conformance(p);
		return sw_with2(p, SW_AssociatedTypeMetadataAccessor, conf, name);
	}
	case 'T': {
		sw_node *proto = sw_pop_kind(p, SW_Type);
		sw_node *path = sw_pop_assoc_type_path(p);
		sw_node *conf = sw_pop_conformance(p);
		return sw_with3(p, SW_AssociatedTypeWitnessTableAccessor, conf, path, proto);
	}
	case 'b': {
		sw_node *proto = sw_pop_kind(p, SW_Type);
		sw_node *conf = sw_pop_conformance(p);
		return sw_with2(p, SW_BaseWitnessTableAccessor, conf, proto);
	}
	default: return NULL;
	}
}

sw_node *sw_parse_witness(sw_parser *p)
{
	char c = sw_next(p);
	for (size_t i = 0; i < sizeof conformance_witnesses / sizeof conformance_witnesses[0]; i++)
		if (conformance_witnesses[i].code == c)
			return sw_with1(p, conformance_witnesses[i].kind, sw_pop_conformance(p));
	switch (c) {
	case 'C': return sw_with1(p, SW_EnumCase, sw_pop_if(p, sw_is_entity));
	case 'V': return sw_with1(p, SW_ValueWitnessTable, sw_pop_kind(p, SW_Type));
	case 'v': {
		char d = sw_next(p);
		if (d != 'd' && d != 'i')
			return NULL;
		return sw_with2(p, SW_FieldOffset, sw_new_index(p, SW_Directness, d == 'i'),
				sw_pop_if(p, sw_is_entity));
	}
	case 'S': return sw_with1(p, SW_ProtocolSelfConformanceWitnessTable, sw_pop_protocol(p));
	case 'O': return outlined(p);
	case 'Z':
	case 'z': return global_once(p, c);
	case 'J': return differentiability_witness(p);
	default: return witness_accessor(p, c);
	}
}
