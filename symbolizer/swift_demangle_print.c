/*
 * swift_demangle_print.c — the Swift demangler's printer: the output
 * buffer, the dispatch over node kinds and the printing of types. Entities,
 * function types, generic signatures and specializations are in
 * swift_demangle_print_entity.c; thunks and other globals in
 * swift_demangle_print_global.c. The words printed are Swift's own
 * (NodePrinter.cpp), so the output matches `swift demangle`.
 */
#include "symbolizer/swift_demangle_internal.h"

#include <string.h>

#include "symbolizer/swift_demangle.h"

void sw_put_u64(sw_printer *pr, uint64_t v)
{
	char d[24];
	size_t n = 0;
	do {
		d[sizeof d - ++n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sw_putn(pr, d + sizeof d - n, n);
}

static void put_text(sw_printer *pr, const sw_node *nd)
{
	if (nd && nd->payload == SW_PAY_TEXT)
		sw_putn(pr, nd->text, nd->text_len);
}

void sw_print_kids_sep(sw_printer *pr, sw_node *nd, int depth, const char *sep, size_t sep_len)
{
	for (uint32_t i = 0; nd && i < nd->nkids; i++) {
		if (i && sep)
			sw_putn(pr, sep, sep_len);
		sw_print(pr, nd->kids[i], depth + 1, false);
	}
}

/* Swift's names for generic parameters: A, B, …, Z, BA, …; depth as a
 * suffix. */
void sw_print_param_name(sw_printer *pr, uint64_t depth, uint64_t index)
{
	char d[24];
	size_t n = 0;
	do {
		d[n++] = (char)('A' + index % 26);
		index /= 26;
	} while (index && n < sizeof d);
	sw_putn(pr, d, n);
	if (depth)
		sw_put_u64(pr, depth);
}

/* A constant string and its length, so printing one needs no strlen. */
struct sw_lit {
	const char *s;
	size_t n;
};
#define LIT(s)                                                                                     \
	{                                                                                          \
		s, sizeof(s) - 1                                                                   \
	}

/* "prefix" then the first child. */
static const struct sw_lit child0_prefix[SW_KIND_COUNT] = {
	[SW_Static] = LIT("static "),
	[SW_AsyncRemoved] = LIT("async demotion of "),
	[SW_RepresentationChanged] = LIT("representation changed of "),
	[SW_CurryThunk] = LIT("curry thunk of "),
	[SW_SILThunkIdentity] = LIT("identity thunk of "),
	[SW_DispatchThunk] = LIT("dispatch thunk of "),
	[SW_MethodDescriptor] = LIT("method descriptor for "),
	[SW_MethodLookupFunction] = LIT("method lookup function for "),
	[SW_ObjCMetadataUpdateFunction] = LIT("ObjC metadata update function for "),
	[SW_ObjCResilientClassStub] = LIT("ObjC resilient class stub for "),
	[SW_FullObjCResilientClassStub] = LIT("full ObjC resilient class stub for "),
	[SW_OutlinedRetain] = LIT("outlined retain of "),
	[SW_OutlinedRelease] = LIT("outlined release of "),
	[SW_OutlinedInitializeWithTake] = LIT("outlined init with take of "),
	[SW_OutlinedInitializeWithTakeNoValueWitness] = LIT("outlined init with take of "),
	[SW_OutlinedInitializeWithCopy] = LIT("outlined init with copy of "),
	[SW_OutlinedInitializeWithCopyNoValueWitness] = LIT("outlined init with copy of "),
	[SW_OutlinedAssignWithTake] = LIT("outlined assign with take of "),
	[SW_OutlinedAssignWithTakeNoValueWitness] = LIT("outlined assign with take of "),
	[SW_OutlinedAssignWithCopy] = LIT("outlined assign with copy of "),
	[SW_OutlinedAssignWithCopyNoValueWitness] = LIT("outlined assign with copy of "),
	[SW_OutlinedDestroy] = LIT("outlined destroy of "),
	[SW_OutlinedDestroyNoValueWitness] = LIT("outlined destroy of "),
	[SW_OutlinedEnumProjectDataForLoad] = LIT("outlined enum project data for load of "),
	[SW_OutlinedEnumTagStore] = LIT("outlined enum tag store of "),
	[SW_OutlinedEnumGetTag] = LIT("outlined enum get tag of "),
	[SW_DeclContext] = LIT(""),
	[SW_Type] = LIT(""),
	[SW_InOut] = LIT("inout "),
	[SW_Isolated] = LIT("isolated "),
	[SW_Sending] = LIT("sending "),
	[SW_CompileTimeLiteral] = LIT("_const "),
	[SW_ConstValue] = LIT("@const "),
	[SW_Shared] = LIT("__shared "),
	[SW_Owned] = LIT("__owned "),
	[SW_NoDerivative] = LIT("@noDerivative "),
	[SW_Weak] = LIT("weak "),
	[SW_Unowned] = LIT("unowned "),
	[SW_Unmanaged] = LIT("unowned(unsafe) "),
	[SW_ProtocolSelfConformanceWitnessTable] =
		LIT("protocol self-conformance witness table for "),
	[SW_ProtocolWitnessTableAccessor] = LIT("protocol witness table accessor for "),
	[SW_ProtocolWitnessTable] = LIT("protocol witness table for "),
	[SW_ProtocolWitnessTablePattern] = LIT("protocol witness table pattern for "),
	[SW_GenericProtocolWitnessTable] = LIT("generic protocol witness table for "),
	[SW_GenericProtocolWitnessTableInstantiationFunction] =
		LIT("instantiation function for generic protocol witness table for "),
	[SW_ResilientProtocolWitnessTable] = LIT("resilient protocol witness table for "),
	[SW_ProtocolSelfConformanceWitness] = LIT("protocol self-conformance witness for "),
	[SW_EnumCase] = LIT("enum case for "),
	[SW_GenericTypeMetadataPattern] = LIT("generic type metadata pattern for "),
	[SW_Metaclass] = LIT("metaclass for "),
	[SW_ProtocolSelfConformanceDescriptor] = LIT("protocol self-conformance descriptor for "),
	[SW_ProtocolConformanceDescriptor] = LIT("protocol conformance descriptor for "),
	[SW_ProtocolConformanceDescriptorRecord] =
		LIT("protocol conformance descriptor runtime record for "),
	[SW_ProtocolDescriptor] = LIT("protocol descriptor for "),
	[SW_ProtocolDescriptorRecord] = LIT("protocol descriptor runtime record for "),
	[SW_ProtocolRequirementsBaseDescriptor] = LIT("protocol requirements base descriptor for "),
	[SW_FullTypeMetadata] = LIT("full type metadata for "),
	[SW_TypeMetadata] = LIT("type metadata for "),
	[SW_TypeMetadataAccessFunction] = LIT("type metadata accessor for "),
	[SW_TypeMetadataInstantiationCache] = LIT("type metadata instantiation cache for "),
	[SW_TypeMetadataInstantiationFunction] = LIT("type metadata instantiation function for "),
	[SW_TypeMetadataSingletonInitializationCache] =
		LIT("type metadata singleton initialization cache for "),
	[SW_TypeMetadataCompletionFunction] = LIT("type metadata completion function for "),
	[SW_TypeMetadataDemanglingCache] = LIT("demangling cache variable for type metadata for "),
	[SW_TypeMetadataLazyCache] = LIT("lazy cache variable for type metadata for "),
	[SW_AssociatedTypeDescriptor] = LIT("associated type descriptor for "),
	[SW_DefaultAssociatedTypeMetadataAccessor] =
		LIT("default associated type metadata accessor for "),
	[SW_ClassMetadataBaseOffset] = LIT("class metadata base offset for "),
	[SW_PropertyDescriptor] = LIT("property descriptor for "),
	[SW_NominalTypeDescriptor] = LIT("nominal type descriptor for "),
	[SW_NominalTypeDescriptorRecord] = LIT("nominal type descriptor runtime record for "),
	[SW_OpaqueTypeDescriptor] = LIT("opaque type descriptor for "),
	[SW_OpaqueTypeDescriptorRecord] = LIT("opaque type descriptor runtime record for "),
	[SW_OpaqueTypeDescriptorAccessor] = LIT("opaque type descriptor accessor for "),
	[SW_OpaqueTypeDescriptorAccessorImpl] = LIT("opaque type descriptor accessor impl for "),
	[SW_OpaqueTypeDescriptorAccessorKey] = LIT("opaque type descriptor accessor key for "),
	[SW_OpaqueTypeDescriptorAccessorVar] = LIT("opaque type descriptor accessor var for "),
	[SW_CoroutineContinuationPrototype] = LIT("coroutine continuation prototype for "),
	[SW_ValueWitnessTable] = LIT("value witness table for "),
	[SW_SILBoxType] = LIT("@box "),
	[SW_PackExpansion] = LIT("repeat "),
	[SW_ReflectionMetadataBuiltinDescriptor] = LIT("reflection metadata builtin descriptor "),
	[SW_ReflectionMetadataFieldDescriptor] = LIT("reflection metadata field descriptor "),
	[SW_ReflectionMetadataAssocTypeDescriptor] =
		LIT("reflection metadata associated type descriptor "),
	[SW_ReflectionMetadataSuperclassDescriptor] =
		LIT("reflection metadata superclass descriptor "),
	[SW_ModuleDescriptor] = LIT("module descriptor "),
	[SW_AnonymousDescriptor] = LIT("anonymous descriptor "),
	[SW_ExtensionDescriptor] = LIT("extension descriptor "),
	[SW_Uniquable] = LIT("uniquable "),
	[SW_CanonicalSpecializedGenericMetaclass] = LIT("specialized generic metaclass for "),
	[SW_CanonicalSpecializedGenericTypeMetadataAccessFunction] =
		LIT("canonical specialized generic type metadata accessor for "),
	[SW_MetadataInstantiationCache] = LIT("metadata instantiation cache for "),
	[SW_NoncanonicalSpecializedGenericTypeMetadata] =
		LIT("noncanonical specialized generic type metadata for "),
	[SW_NoncanonicalSpecializedGenericTypeMetadataCache] =
		LIT("cache variable for noncanonical specialized generic type metadata for "),
	[SW_CanonicalPrespecializedGenericTypeCachingOnceToken] =
		LIT("flag for loading of canonical specialized generic type metadata for "),
};

/* Fixed words, no children printed. */
static const struct sw_lit fixed_text[SW_KIND_COUNT] = {
	[SW_NonObjCAttribute] = LIT("@nonobjc "),
	[SW_ObjCAttribute] = LIT("@objc "),
	[SW_DirectMethodReferenceAttribute] = LIT("super "),
	[SW_DynamicAttribute] = LIT("dynamic "),
	[SW_IsSerialized] = LIT("serialized"),
	[SW_UnknownIndex] = LIT("unknown index"),
	[SW_BuiltinTupleType] = LIT("Builtin.TheTupleType"),
	[SW_DynamicSelf] = LIT("Self"),
	[SW_ConstrainedExistentialSelf] = LIT("Self"),
	[SW_ErrorType] = LIT("<ERROR TYPE>"),
	[SW_ImplEscaping] = LIT("@escaping"),
	[SW_ImplErasedIsolation] = LIT("@isolated(any)"),
	[SW_ImplNonisolatedNonsendingIsolation] = LIT("@caller_isolated"),
	[SW_ImplCalledOnceFunction] = LIT("@called(once)"),
	[SW_ImplSendingResult] = LIT("sending"),
	[SW_ConcurrentFunctionType] = LIT("@Sendable "),
	[SW_IsolatedAnyFunctionType] = LIT("@isolated(any) "),
	[SW_NonIsolatedCallerFunctionType] = LIT("nonisolated(nonsending) "),
	[SW_SendingResultFunctionType] = LIT("sending "),
	[SW_AsyncAnnotation] = LIT(" async"),
	[SW_ThrowsAnnotation] = LIT(" throws"),
	[SW_EmptyList] = LIT(" empty-list "),
	[SW_FirstElementMarker] = LIT(" first-element-marker "),
	[SW_VariadicMarker] = LIT(" variadic-marker "),
	[SW_OpaqueReturnType] = LIT("some"),
	[SW_AsyncFunctionPointer] = LIT("async function pointer to "),
	[SW_HasSymbolQuery] = LIT("#_hasSymbol query for "),
	[SW_CoroFunctionPointer] = LIT("coro function pointer to "),
	[SW_DefaultOverride] = LIT("default override of "),
	[SW_BackDeploymentFallback] = LIT("back deployment fallback for "),
	[SW_AssociatedType] = LIT(""),
	[SW_OpaqueReturnTypeIndex] = LIT(""),
	[SW_LabelList] = LIT(""),
};

/* Fixed words that a shortened thunk drops. */
static const struct sw_lit thunk_text[SW_KIND_COUNT] = {
	[SW_MergedFunction] = LIT("merged "),
	[SW_DistributedThunk] = LIT("distributed thunk "),
	[SW_DistributedAccessor] = LIT("distributed accessor for "),
	[SW_AccessibleFunctionRecord] = LIT("accessible function runtime record for "),
	[SW_DynamicallyReplaceableFunctionKey] = LIT("dynamically replaceable key for "),
	[SW_DynamicallyReplaceableFunctionImpl] = LIT("dynamically replaceable thunk for "),
	[SW_DynamicallyReplaceableFunctionVar] = LIT("dynamically replaceable variable for "),
	[SW_BackDeploymentThunk] = LIT("back deployment thunk for "),
};

/* The printer tries its handlers in a fixed order (below) and the first
 * that knows the kind prints it. For the kinds app symbols are made of,
 * print_stage says which handler that is, so the ones before it, which
 * would all decline, are skipped. A kind not listed starts at the top.
 * The ST_ENTITY kinds all pass sw_print_entity_kinds()' gate (the nominal
 * types are let through, the others are no simple type), so they skip it. */
enum print_stage { ST_ALL, ST_ENTITY, ST_SHAPES, ST_NAMES, ST_TYPES, ST_MISC };

static const uint8_t print_stage[SW_KIND_COUNT] = {
	[SW_Structure] = ST_ENTITY,
	[SW_Class] = ST_ENTITY,
	[SW_Enum] = ST_ENTITY,
	[SW_Protocol] = ST_ENTITY,
	[SW_TypeAlias] = ST_ENTITY,
	[SW_OtherNominalType] = ST_ENTITY,
	[SW_Function] = ST_ENTITY,
	[SW_BoundGenericFunction] = ST_ENTITY,
	[SW_Variable] = ST_ENTITY,
	[SW_Subscript] = ST_ENTITY,
	[SW_Getter] = ST_ENTITY,
	[SW_Setter] = ST_ENTITY,
	[SW_ModifyAccessor] = ST_ENTITY,
	[SW_ReadAccessor] = ST_ENTITY,
	[SW_DidSet] = ST_ENTITY,
	[SW_WillSet] = ST_ENTITY,
	[SW_ExplicitClosure] = ST_ENTITY,
	[SW_ImplicitClosure] = ST_ENTITY,
	[SW_Allocator] = ST_ENTITY,
	[SW_Constructor] = ST_ENTITY,
	[SW_Destructor] = ST_ENTITY,
	[SW_Deallocator] = ST_ENTITY,
	[SW_ArgumentTuple] = ST_ENTITY,
	[SW_Tuple] = ST_SHAPES,
	[SW_TupleElement] = ST_SHAPES,
	[SW_ReturnType] = ST_SHAPES,
	[SW_BoundGenericClass] = ST_SHAPES,
	[SW_BoundGenericStructure] = ST_SHAPES,
	[SW_BoundGenericEnum] = ST_SHAPES,
	[SW_Metatype] = ST_SHAPES,
	[SW_ProtocolList] = ST_SHAPES,
	[SW_Module] = ST_NAMES,
	[SW_LocalDeclName] = ST_NAMES,
	[SW_PrivateDeclName] = ST_NAMES,
	[SW_Number] = ST_NAMES,
	[SW_TypeList] = ST_NAMES,
	[SW_FunctionType] = ST_TYPES,
	[SW_NoEscapeFunctionType] = ST_TYPES,
	[SW_DependentGenericParamType] = ST_TYPES,
	[SW_DependentMemberType] = ST_TYPES,
	[SW_DependentGenericType] = ST_TYPES,
	[SW_DependentGenericSignature] = ST_TYPES,
	[SW_DependentGenericConformanceRequirement] = ST_TYPES,
	[SW_GlobalActorFunctionType] = ST_TYPES,
	[SW_Global] = ST_MISC,
};

static bool print_type_shapes(sw_printer *pr, sw_node *nd, int depth);
static bool print_names(sw_printer *pr, sw_node *nd, int depth);
static bool print_other_types(sw_printer *pr, sw_node *nd, int depth);

/* The handlers from STAGE on; the node is done when one of them knows it. */
__attribute__((noinline)) static sw_node *print_from(sw_printer *pr, sw_node *nd, int depth,
						     bool as_prefix, enum print_stage stage)
{
	sw_kind k = (sw_kind)nd->kind;
	if (stage == ST_ALL) {
		if (child0_prefix[k].s) {
			sw_putn(pr, child0_prefix[k].s, child0_prefix[k].n);
			sw_print(pr, sw_kid(nd, 0), depth + 1, false);
			return NULL;
		}
		if (fixed_text[k].s) {
			sw_putn(pr, fixed_text[k].s, fixed_text[k].n);
			return NULL;
		}
		if (thunk_text[k].s) {
			if (!pr->opt.short_thunk)
				sw_putn(pr, thunk_text[k].s, thunk_text[k].n);
			return NULL;
		}
	}
	sw_node *postfix = NULL;
	if (stage == ST_ENTITY ? sw_print_entity(pr, nd, depth, as_prefix, &postfix)
			       : stage < ST_ENTITY &&
					 sw_print_entity_kinds(pr, nd, depth, as_prefix, &postfix))
		return postfix;
	if ((stage <= ST_SHAPES && print_type_shapes(pr, nd, depth)) ||
	    (stage <= ST_NAMES && print_names(pr, nd, depth)) ||
	    (stage <= ST_TYPES && print_other_types(pr, nd, depth)) ||
	    sw_print_misc_kinds(pr, nd, depth))
		return NULL;
	pr->invalid = true;
	return NULL;
}

sw_node *sw_print(sw_printer *pr, sw_node *nd, int depth, bool as_prefix)
{
	if (pr->invalid)
		return NULL;
	if (!nd || depth > SYM_SWIFT_MAX_DEPTH || ++pr->visits > pr->max_visits) {
		pr->invalid = true;
		return NULL;
	}
	/* Type wrappers are the most common node: unwrap them in place. */
	while (nd->kind == SW_Type) {
		nd = sw_kid(nd, 0);
		if (!nd || ++depth > SYM_SWIFT_MAX_DEPTH) {
			pr->invalid = true;
			return NULL;
		}
	}
	if (nd->kind == SW_Identifier) {
		sw_putn(pr, nd->text, nd->text_len);
		return NULL;
	}
	/* Every context chain ends in a module: print_names() in brief. */
	if (nd->kind == SW_Module) {
		if (pr->opt.module_names && nd->payload == SW_PAY_TEXT)
			sw_putn(pr, nd->text, nd->text_len);
		return NULL;
	}
	return print_from(pr, nd, depth, as_prefix, (enum print_stage)print_stage[nd->kind]);
}

/* ---- types ---- */

bool sw_is_simple_type(const sw_node *nd)
{
	switch (nd->kind) {
	case SW_AssociatedType:
	case SW_AssociatedTypeRef:
	case SW_BoundGenericClass:
	case SW_BoundGenericEnum:
	case SW_BoundGenericStructure:
	case SW_BoundGenericProtocol:
	case SW_BoundGenericOtherNominalType:
	case SW_BoundGenericTypeAlias:
	case SW_BoundGenericFunction:
	case SW_BuiltinTypeName:
	case SW_BuiltinTupleType:
	case SW_BuiltinFixedArray:
	case SW_BuiltinBorrow:
	case SW_Class:
	case SW_DependentGenericType:
	case SW_DependentMemberType:
	case SW_DependentGenericParamType:
	case SW_DynamicSelf:
	case SW_Enum:
	case SW_ErrorType:
	case SW_ExistentialMetatype:
	case SW_Metatype:
	case SW_MetatypeRepresentation:
	case SW_Module:
	case SW_Tuple:
	case SW_Pack:
	case SW_SILPackDirect:
	case SW_SILPackIndirect:
	case SW_ConstrainedExistentialRequirementList:
	case SW_ConstrainedExistentialSelf:
	case SW_Protocol:
	case SW_ReturnType:
	case SW_SILBoxType:
	case SW_SILBoxTypeWithLayout:
	case SW_Structure:
	case SW_OtherNominalType:
	case SW_TupleElementName:
	case SW_TypeAlias:
	case SW_TypeList:
	case SW_LabelList:
	case SW_SugaredOptional:
	case SW_SugaredArray:
	case SW_SugaredInlineArray:
	case SW_SugaredDictionary:
	case SW_SugaredParen:
	case SW_Integer:
	case SW_NegativeInteger: return true;
	case SW_Type: return nd->nkids && sw_is_simple_type(nd->kids[0]);
	case SW_ProtocolList: return nd->nkids && nd->kids[0]->nkids <= 1;
	case SW_ProtocolListWithAnyObject:
		return nd->nkids && nd->kids[0]->nkids && nd->kids[0]->kids[0]->nkids == 0;
	default: return false;
	}
}

void sw_print_with_parens(sw_printer *pr, sw_node *type, int depth)
{
	bool parens = type && !sw_is_simple_type(type);
	if (parens)
		sw_putc(pr, '(');
	sw_print(pr, type, depth + 1, false);
	if (parens)
		sw_putc(pr, ')');
}

enum sugar { SUGAR_NONE, SUGAR_OPTIONAL, SUGAR_IUO, SUGAR_ARRAY, SUGAR_DICTIONARY };

/* Inline: NAME is a literal, its length folds. */
static inline bool is_swift_named(const sw_node *unbound, const char *name)
{
	sw_node *mod = sw_kid(unbound, 0), *id = sw_kid(unbound, 1);
	return mod && id && mod->kind == SW_Module && sw_text_is(mod, "Swift") &&
	       id->kind == SW_Identifier && sw_text_is(id, name);
}

static enum sugar find_sugar(const sw_node *nd)
{
	while (nd->kind == SW_Type && nd->nkids == 1)
		nd = nd->kids[0];
	if (nd->nkids != 2 ||
	    (nd->kind != SW_BoundGenericEnum && nd->kind != SW_BoundGenericStructure))
		return SUGAR_NONE;
	sw_node *unbound = sw_kid(nd->kids[0], 0);
	size_t nargs = nd->kids[1]->nkids;
	if (nd->kind == SW_BoundGenericEnum) {
		if (nargs == 1 && is_swift_named(unbound, "Optional"))
			return SUGAR_OPTIONAL;
		if (nargs == 1 && is_swift_named(unbound, "ImplicitlyUnwrappedOptional"))
			return SUGAR_IUO;
		return SUGAR_NONE;
	}
	if (nargs == 1 && is_swift_named(unbound, "Array"))
		return SUGAR_ARRAY;
	if (nargs == 2 && is_swift_named(unbound, "Dictionary"))
		return SUGAR_DICTIONARY;
	return SUGAR_NONE;
}

static void print_bound_generic_plain(sw_printer *pr, sw_node *nd, int depth)
{
	sw_print(pr, nd->kids[0], depth + 1, false);
	sw_putc(pr, '<');
	sw_print_kids(pr, nd->kids[1], depth, ", ");
	sw_putc(pr, '>');
}

static void print_bound_generic(sw_printer *pr, sw_node *nd, int depth)
{
	if (nd->nkids < 2)
		return;
	if (nd->nkids != 2 || !pr->opt.sugar || nd->kind == SW_BoundGenericClass) {
		print_bound_generic_plain(pr, nd, depth);
		return;
	}
	if (nd->kind == SW_BoundGenericProtocol) {
		sw_print_kids(pr, nd->kids[1], depth, NULL);
		sw_put(pr, " as ");
		sw_print(pr, nd->kids[0], depth + 1, false);
		return;
	}
	sw_node *args = nd->kids[1];
	enum sugar sugar = find_sugar(nd);
	switch (sugar) {
	case SUGAR_NONE: print_bound_generic_plain(pr, nd, depth); break;
	case SUGAR_OPTIONAL:
	case SUGAR_IUO:
		sw_print_with_parens(pr, sw_kid(args, 0), depth);
		sw_putc(pr, sugar == SUGAR_OPTIONAL ? '?' : '!');
		break;
	case SUGAR_ARRAY:
		sw_putc(pr, '[');
		sw_print(pr, sw_kid(args, 0), depth + 1, false);
		sw_putc(pr, ']');
		break;
	case SUGAR_DICTIONARY:
		sw_putc(pr, '[');
		sw_print(pr, sw_kid(args, 0), depth + 1, false);
		sw_put(pr, " : ");
		sw_print(pr, sw_kid(args, 1), depth + 1, false);
		sw_putc(pr, ']');
		break;
	}
}

static bool is_existential(const sw_node *nd)
{
	return nd &&
	       (nd->kind == SW_ExistentialMetatype || nd->kind == SW_ProtocolList ||
		nd->kind == SW_ProtocolListWithClass || nd->kind == SW_ProtocolListWithAnyObject);
}

static void print_metatype(sw_printer *pr, sw_node *nd, int depth)
{
	uint32_t i = 0;
	if (nd->nkids == 2) {
		sw_print(pr, nd->kids[0], depth + 1, false);
		sw_putc(pr, ' ');
		i = 1;
	}
	if (nd->kind == SW_ExistentialMetatype) {
		sw_print(pr, sw_kid(nd, i), depth + 1, false);
		sw_put(pr, ".Type");
		return;
	}
	sw_node *type = sw_kid(sw_kid(nd, i), 0);
	sw_print_with_parens(pr, type, depth);
	sw_put(pr, is_existential(type) ? ".Protocol" : ".Type");
}

static void print_protocol_lists(sw_printer *pr, sw_node *nd, int depth)
{
	if (nd->kind == SW_ProtocolList) {
		sw_node *list = sw_kid(nd, 0);
		if (!list)
			return;
		if (list->nkids == 0)
			sw_put(pr, "Any");
		else
			sw_print_kids(pr, list, depth, " & ");
		return;
	}
	sw_node *protos = sw_kid(nd, 0), *list = sw_kid(protos, 0);
	if (nd->kind == SW_ProtocolListWithClass) {
		if (nd->nkids < 2)
			return;
		sw_print(pr, nd->kids[1], depth + 1, false);
		sw_put(pr, " & ");
		sw_print_kids(pr, list, depth, " & ");
		return;
	}
	if (!list)
		return;
	if (list->nkids) {
		sw_print_kids(pr, list, depth, " & ");
		sw_put(pr, " & ");
	}
	if (pr->opt.qualify && pr->opt.stdlib_module)
		sw_put(pr, "Swift.");
	sw_put(pr, "AnyObject");
}

static void print_tuple_element(sw_printer *pr, sw_node *nd, int depth)
{
	sw_node *type = NULL;
	bool variadic = false;
	for (uint32_t i = 0; i < nd->nkids; i++) {
		sw_node *c = nd->kids[i];
		if (c->kind == SW_TupleElementName && !type) {
			put_text(pr, c);
			sw_put(pr, ": ");
		}
		if (c->kind == SW_Type && !type)
			type = c;
		if (c->kind == SW_VariadicMarker)
			variadic = true;
	}
	sw_print(pr, type, depth + 1, false);
	if (variadic)
		sw_put(pr, "...");
}

static void print_wrapped(sw_printer *pr, sw_node *nd, int depth, const char *open, const char *sep,
			  const char *close)
{
	sw_put(pr, open);
	sw_print_kids(pr, nd, depth, sep);
	sw_put(pr, close);
}

static void print_two(sw_printer *pr, sw_node *nd, int depth, const char *open, const char *mid,
		      const char *close)
{
	sw_put(pr, open);
	sw_print(pr, sw_kid(nd, 0), depth + 1, false);
	sw_put(pr, mid);
	sw_print(pr, sw_kid(nd, 1), depth + 1, false);
	sw_put(pr, close);
}

static bool print_type_shapes(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_Tuple: /* print_wrapped(), with the lengths known here */
		sw_putc(pr, '(');
		sw_print_kids(pr, nd, depth, ", ");
		sw_putc(pr, ')');
		return true;
	case SW_TupleElement: print_tuple_element(pr, nd, depth); return true;
	case SW_TupleElementName:
		put_text(pr, nd);
		sw_put(pr, ": ");
		return true;
	case SW_Pack: print_wrapped(pr, nd, depth, "Pack{", ", ", "}"); return true;
	case SW_SILPackDirect:
		print_wrapped(pr, nd, depth, "@direct Pack{", ", ", "}");
		return true;
	case SW_SILPackIndirect:
		print_wrapped(pr, nd, depth, "@indirect Pack{", ", ", "}");
		return true;
	case SW_PackElement:
		sw_put(pr, "/* level: ");
		sw_put_u64(pr, sw_kid(nd, 1) ? nd->kids[1]->index : 0);
		sw_put(pr, " */ each ");
		sw_print(pr, sw_kid(nd, 0), depth + 1, false);
		return true;
	case SW_ReturnType:
		if (nd->nkids == 0)
			put_text(pr, nd);
		else
			sw_print_kids(pr, nd, depth, NULL);
		return true;
	case SW_BoundGenericClass:
	case SW_BoundGenericStructure:
	case SW_BoundGenericEnum:
	case SW_BoundGenericProtocol:
	case SW_BoundGenericOtherNominalType:
	case SW_BoundGenericTypeAlias: print_bound_generic(pr, nd, depth); return true;
	case SW_Metatype:
	case SW_ExistentialMetatype: print_metatype(pr, nd, depth); return true;
	case SW_ConstrainedExistential: print_two(pr, nd, depth, "any ", "<", ">"); return true;
	case SW_ConstrainedExistentialRequirementList:
		sw_print_kids(pr, nd, depth, ", ");
		return true;
	case SW_ProtocolList:
	case SW_ProtocolListWithClass:
	case SW_ProtocolListWithAnyObject: print_protocol_lists(pr, nd, depth); return true;
	case SW_SugaredOptional:
		sw_print_with_parens(pr, sw_kid(nd, 0), depth);
		sw_putc(pr, '?');
		return true;
	case SW_SugaredArray: print_wrapped(pr, nd, depth, "[", NULL, "]"); return true;
	case SW_SugaredInlineArray: print_two(pr, nd, depth, "[", " of ", "]"); return true;
	case SW_SugaredDictionary: print_two(pr, nd, depth, "[", " : ", "]"); return true;
	case SW_SugaredParen: print_wrapped(pr, nd, depth, "(", NULL, ")"); return true;
	case SW_BuiltinFixedArray:
		print_two(pr, nd, depth, "Builtin.FixedArray<", ", ", ">");
		return true;
	case SW_BuiltinBorrow:
		print_wrapped(pr, nd, depth, "Builtin.Borrow<", NULL, ">");
		return true;
	case SW_OpaqueReturnTypeOf:
		print_wrapped(pr, nd, depth, "<<opaque return type of ", NULL, ">>");
		return true;
	case SW_OpaqueType: print_two(pr, nd, depth, "", ".", ""); return true;
	default: return false;
	}
}

static void print_private_name(sw_printer *pr, sw_node *nd, int depth)
{
	bool show = pr->opt.private_discriminators;
	if (nd->nkids > 1) {
		if (show)
			sw_putc(pr, '(');
		sw_print(pr, nd->kids[1], depth + 1, false);
		if (show) {
			sw_put(pr, " in ");
			put_text(pr, nd->kids[0]);
			sw_putc(pr, ')');
		}
	} else if (show) {
		sw_put(pr, "(in ");
		put_text(pr, sw_kid(nd, 0));
		sw_putc(pr, ')');
	}
}

static void print_signed(sw_printer *pr, const sw_node *nd)
{
	if (nd->kind == SW_NegativeInteger && nd->index)
		sw_putc(pr, '-');
	sw_put_u64(pr, nd->index);
}

static bool print_names(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_Module:
		if (pr->opt.module_names)
			put_text(pr, nd);
		return true;
	case SW_Identifier: put_text(pr, nd); return true;
	case SW_LocalDeclName:
		sw_print(pr, sw_kid(nd, 1), depth + 1, false);
		if (pr->opt.local_contexts) {
			sw_put(pr, " #");
			sw_put_u64(pr, (sw_kid(nd, 0) ? nd->kids[0]->index : 0) + 1);
		}
		return true;
	case SW_PrivateDeclName: print_private_name(pr, nd, depth); return true;
	case SW_RelatedEntityDeclName:
		sw_put(pr, "related decl '");
		put_text(pr, sw_kid(nd, 0));
		sw_put(pr, "' for ");
		sw_print(pr, sw_kid(nd, 1), depth + 1, false);
		return true;
	case SW_Index:
	case SW_Number:
	case SW_SpecializationPassID:
	case SW_Integer:
	case SW_NegativeInteger: print_signed(pr, nd); return true;
	case SW_InfixOperator:
		put_text(pr, nd);
		sw_put(pr, " infix");
		return true;
	case SW_PrefixOperator:
		put_text(pr, nd);
		sw_put(pr, " prefix");
		return true;
	case SW_PostfixOperator:
		put_text(pr, nd);
		sw_put(pr, " postfix");
		return true;
	case SW_BuiltinTypeName:
	case SW_ClangType:
	case SW_MetatypeRepresentation:
	case SW_ImplConvention:
	case SW_ImplFunctionAttribute: put_text(pr, nd); return true;
	case SW_TypeList: sw_print_kids(pr, nd, depth, NULL); return true;
	case SW_AssociatedTypeRef:
		sw_print(pr, sw_kid(nd, 0), depth + 1, false);
		sw_putc(pr, '.');
		put_text(pr, sw_kid(nd, 1));
		return true;
	default: return false;
	}
}

static void print_dependent(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_DependentGenericParamType:
		sw_print_param_name(pr, sw_kid(nd, 0) ? nd->kids[0]->index : 0,
				    sw_kid(nd, 1) ? nd->kids[1]->index : 0);
		return;
	case SW_DependentMemberType:
		sw_print(pr, sw_kid(nd, 0), depth + 1, false);
		sw_putc(pr, '.');
		sw_print(pr, sw_kid(nd, 1), depth + 1, false);
		return;
	case SW_DependentGenericType: {
		sw_node *dep = sw_kid(nd, 1);
		sw_print(pr, sw_kid(nd, 0), depth + 1, false);
		while (dep && dep->kind == SW_Type && dep->nkids == 1 &&
		       dep->kids[0]->kind == SW_Type)
			dep = dep->kids[0];
		if (dep && sw_kid(dep, 0) &&
		    !(dep->kids[0]->kind == SW_FunctionType ||
		      dep->kids[0]->kind == SW_NoEscapeFunctionType ||
		      dep->kids[0]->kind == SW_UncurriedFunctionType ||
		      dep->kids[0]->kind == SW_DependentGenericType))
			sw_putc(pr, ' ');
		sw_print(pr, sw_kid(nd, 1), depth + 1, false);
		return;
	}
	case SW_DependentAssociatedTypeRef:
		if (nd->nkids > 1) {
			sw_print(pr, nd->kids[1], depth + 1, false);
			sw_putc(pr, '.');
		}
		sw_print(pr, sw_kid(nd, 0), depth + 1, false);
		return;
	default: return;
	}
}

static const char *layout_name(char c)
{
	switch (c) {
	case 'U': return "_UnknownLayout";
	case 'R': return "_RefCountedObject";
	case 'N': return "_NativeRefCountedObject";
	case 'C': return "AnyObject";
	case 'D': return "_NativeClass";
	case 'T':
	case 'E':
	case 'e': return "_Trivial";
	case 'M':
	case 'm': return "_TrivialAtMost";
	case 'B': return "_BridgeObject";
	case 'A': return "AnyReference";
	case 'S': return "_TrivialStride";
	default: return "";
	}
}

static void print_requirement(sw_printer *pr, sw_node *nd, int depth)
{
	sw_print(pr, sw_kid(nd, 0), depth + 1, false);
	sw_node *second = sw_kid(nd, 1);
	switch (nd->kind) {
	case SW_DependentGenericConformanceRequirement:
		sw_put(pr, ": ");
		sw_print(pr, second, depth + 1, false);
		return;
	case SW_DependentGenericSameTypeRequirement:
		sw_put(pr, " == ");
		sw_print(pr, second, depth + 1, false);
		return;
	case SW_DependentGenericSameShapeRequirement:
		sw_put(pr, ".shape == ");
		sw_print(pr, second, depth + 1, false);
		sw_put(pr, ".shape");
		return;
	case SW_DependentGenericInverseConformanceRequirement: {
		static const char *const names[] = {"Copyable", "Escapable"};
		uint64_t bit = second ? second->index : 0;
		sw_put(pr, ": ~Swift.");
		if (bit < 2) {
			sw_put(pr, names[bit]);
		} else {
			sw_put(pr, "<bit ");
			sw_put_u64(pr, bit);
			sw_putc(pr, '>');
		}
		return;
	}
	default: break;
	}
	sw_put(pr, ": ");
	sw_put(pr, layout_name(second && second->text_len ? second->text[0] : 0));
	if (nd->nkids > 2) {
		sw_putc(pr, '(');
		sw_print(pr, nd->kids[2], depth + 1, false);
		if (nd->nkids > 3) {
			sw_put(pr, ", ");
			sw_print(pr, nd->kids[3], depth + 1, false);
		}
		sw_putc(pr, ')');
	}
}

static void print_fn_attr_type(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_GlobalActorFunctionType:
		if (nd->nkids) {
			sw_putc(pr, '@');
			sw_print(pr, nd->kids[0], depth + 1, false);
			sw_putc(pr, ' ');
		}
		return;
	case SW_DifferentiableFunctionType:
	case SW_ImplDifferentiabilityKind:
		sw_put(pr, "@differentiable");
		switch (nd->index) {
		case 'f': sw_put(pr, "(_forward)"); break;
		case 'r': sw_put(pr, "(reverse)"); break;
		case 'l': sw_put(pr, "(_linear)"); break;
		default: break;
		}
		if (nd->kind == SW_DifferentiableFunctionType)
			sw_putc(pr, ' ');
		return;
	case SW_TypedThrowsAnnotation:
		sw_put(pr, " throws(");
		if (nd->nkids == 1)
			sw_print(pr, nd->kids[0], depth + 1, false);
		sw_putc(pr, ')');
		return;
	default: return;
	}
}

/* The types neither print_type_shapes() nor print_names() knows. */
static bool print_other_types(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_DependentGenericParamType:
	case SW_DependentMemberType:
	case SW_DependentAssociatedTypeRef:
	case SW_DependentGenericType: print_dependent(pr, nd, depth); return true;
	case SW_DependentGenericConformanceRequirement:
	case SW_DependentGenericSameTypeRequirement:
	case SW_DependentGenericSameShapeRequirement:
	case SW_DependentGenericLayoutRequirement:
	case SW_DependentGenericInverseConformanceRequirement:
		print_requirement(pr, nd, depth);
		return true;
	case SW_DependentGenericSignature:
	case SW_DependentPseudogenericSignature:
		sw_print_generic_signature(pr, nd, depth);
		return true;
	case SW_GlobalActorFunctionType:
	case SW_DifferentiableFunctionType:
	case SW_ImplDifferentiabilityKind:
	case SW_TypedThrowsAnnotation: print_fn_attr_type(pr, nd, depth); return true;
	case SW_FunctionType:
	case SW_UncurriedFunctionType:
	case SW_NoEscapeFunctionType:
	case SW_AutoClosureType:
	case SW_EscapingAutoClosureType:
	case SW_ThinFunctionType:
	case SW_CFunctionPointer:
	case SW_ObjCBlock:
	case SW_EscapingObjCBlock:
	case SW_CalledOnceFunctionType: sw_print_function_type(pr, NULL, nd, depth); return true;
	case SW_ImplFunctionType: sw_print_impl_function_type(pr, nd, depth); return true;
	default: return false;
	}
}
