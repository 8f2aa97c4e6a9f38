/* Debug info that the BPF backend turns into .BTF and .BTF.ext. libbpf 1.x
 * reads map definitions only from BTF: a ".maps" variable is a struct
 * whose members are pointers to int arrays, the array's element count
 * carrying the value (what libbpf's __uint(name, val) macro writes). */
#include <stdio.h>
#include <string.h>

#include "host_priv.h"

#define DW_ATE_signed 0x05
#define DW_ATE_signed_char 0x06

void hl_btf_init(struct hctx *h)
{
	h->di = LLVMCreateDIBuilder(h->mod);
	const char *name = h->prog->src.name ? h->prog->src.name : "stdin";
	h->di_file = LLVMDIBuilderCreateFile(h->di, name, strlen(name), ".", 1);
	h->di_cu = LLVMDIBuilderCreateCompileUnit(
		h->di, LLVMDWARFSourceLanguageC, h->di_file, "gpux", 4, true,
		"", 0, 0, "", 0, LLVMDWARFEmissionFull, 0, false, false, "", 0,
		"", 0);
	LLVMAddModuleFlag(h->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version",
			  13, LLVMValueAsMetadata(LLVMConstInt(h->i32, 4, false)));
	LLVMAddModuleFlag(h->mod, LLVMModuleFlagBehaviorWarning,
			  "Debug Info Version", 18,
			  LLVMValueAsMetadata(LLVMConstInt(
				  h->i32, LLVMDebugMetadataVersion(), false)));
	h->di_long = LLVMDIBuilderCreateBasicType(h->di, "long", 4, 64,
						  DW_ATE_signed, LLVMDIFlagZero);
	h->di_int = LLVMDIBuilderCreateBasicType(h->di, "int", 3, 32,
						 DW_ATE_signed, LLVMDIFlagZero);
	h->di_voidp = LLVMDIBuilderCreatePointerType(h->di, NULL, 64, 64, 0, "", 0);
}

static void attach_dbg(struct hctx *h, LLVMValueRef g, const char *name,
		       LLVMMetadataRef ty)
{
	LLVMMetadataRef expr = LLVMDIBuilderCreateExpression(h->di, NULL, 0);
	LLVMMetadataRef gve = LLVMDIBuilderCreateGlobalVariableExpression(
		h->di, h->di_cu, name, strlen(name), name, strlen(name),
		h->di_file, 0, ty, false, expr, NULL, 64);
	LLVMGlobalSetMetadata(g, LLVMGetMDKindIDInContext(h->ctx, "dbg", 3), gve);
}

/* struct { int (*type)[T]; int (*max_entries)[N]; ... } name SEC(".maps") */
void hl_btf_map_def(struct hctx *h, LLVMValueRef g, const char *name,
		 const uint32_t *vals, const char *const *names, int n)
{
	LLVMMetadataRef members[8];
	for (int i = 0; i < n && i < 8; i++) {
		LLVMMetadataRef sub = LLVMDIBuilderGetOrCreateSubrange(h->di, 0, vals[i]);
		LLVMMetadataRef arr = LLVMDIBuilderCreateArrayType(
			h->di, (uint64_t)vals[i] * 32, 32, h->di_int, &sub, 1);
		LLVMMetadataRef p = LLVMDIBuilderCreatePointerType(h->di, arr, 64, 64,
								   0, "", 0);
		members[i] = LLVMDIBuilderCreateMemberType(
			h->di, h->di_file, names[i], strlen(names[i]), h->di_file, 0,
			64, 64, (uint64_t)i * 64, LLVMDIFlagZero, p);
	}
	LLVMMetadataRef st = LLVMDIBuilderCreateStructType(
		h->di, h->di_file, "", 0, h->di_file, 0, (uint64_t)n * 64, 64,
		LLVMDIFlagZero, NULL, members, (unsigned)n, 0, NULL, "", 0);
	attach_dbg(h, g, name, st);
}

/* long NAME(void *, ...): programs take the context; kfunc declarations
 * get their prototype so that libbpf can match them to the kernel's. */
LLVMMetadataRef hl_btf_func(struct hctx *h, LLVMValueRef fn, const char *name,
			 int nparams, bool definition, unsigned line)
{
	LLVMMetadataRef types[4] = { h->di_long };
	for (int i = 0; i < nparams && i < 3; i++)
		types[i + 1] = h->di_voidp;
	LLVMMetadataRef ft = LLVMDIBuilderCreateSubroutineType(
		h->di, h->di_file, types, (unsigned)nparams + 1, LLVMDIFlagPrototyped);
	LLVMMetadataRef sp = LLVMDIBuilderCreateFunction(
		h->di, h->di_file, name, strlen(name), name, strlen(name),
		h->di_file, line, ft, false, definition, line,
		LLVMDIFlagPrototyped, true);
	LLVMSetSubprogram(fn, sp);
	/* the kernel wants every FUNC argument named in BTF */
	for (int i = 0; i < nparams && i < 3; i++) {
		char an[8];
		int n = snprintf(an, sizeof(an), i ? "arg%d" : "ctx", i);
		LLVMDIBuilderCreateParameterVariable(h->di, sp, an, (size_t)n,
						     (unsigned)i + 1, h->di_file, line,
						     h->di_voidp, true, LLVMDIFlagZero);
	}
	/* a declaration is not finalized with the builder: resolve it now */
	if (!definition)
		LLVMDIBuilderFinalizeSubprogram(h->di, sp);
	return sp;
}

/* libbpf checks an extern kfunc against the kernel's prototype: void
 * matches only void, a pointer only a pointer to the same kind of type
 * (a struct of the same name, members unchecked), integers any integer. */
void hl_btf_kfunc(struct hctx *h, LLVMValueRef fn, const struct host_sops_kfunc *k)
{
	LLVMMetadataRef types[4] = { k->ret_void ? NULL : h->di_long };
	int n = k->nargs < 3 ? k->nargs : 3;
	for (int i = 0; i < n; i++) {
		const char *s = k->ptr_to[i];
		LLVMMetadataRef st = s && *s ? LLVMDIBuilderCreateStructType(
			h->di, h->di_file, s, strlen(s), h->di_file, 0, 0, 64, LLVMDIFlagZero,
			NULL, NULL, 0, 0, NULL, "", 0) : NULL;
		types[i + 1] = !s ? h->di_long
			       : st ? LLVMDIBuilderCreatePointerType(h->di, st, 64, 64, 0, "", 0)
			       : h->di_voidp;
	}
	LLVMMetadataRef ft = LLVMDIBuilderCreateSubroutineType(
		h->di, h->di_file, types, (unsigned)n + 1, LLVMDIFlagPrototyped);
	LLVMMetadataRef sp = LLVMDIBuilderCreateFunction(
		h->di, h->di_file, k->name, strlen(k->name), k->name, strlen(k->name),
		h->di_file, 0, ft, false, false, 0, LLVMDIFlagPrototyped, true);
	LLVMSetSubprogram(fn, sp);
	for (int i = 0; i < n; i++) {
		char an[8];
		int len = snprintf(an, sizeof(an), "arg%d", i);
		LLVMDIBuilderCreateParameterVariable(h->di, sp, an, (size_t)len, (unsigned)i + 1,
						     h->di_file, 0, types[i + 1], true, LLVMDIFlagZero);
	}
	LLVMDIBuilderFinalizeSubprogram(h->di, sp);
}

/* struct STRUCT_NAME { long (*member)(void *); ... } var SEC(".struct_ops").
 * The type's name is what libbpf looks up in the driver's BTF at load. */
void hl_btf_struct_ops(struct hctx *h, LLVMValueRef g, const char *var,
		    const struct host_sops_abi *abi)
{
	LLVMMetadataRef types[2] = { h->di_long, h->di_voidp };
	LLVMMetadataRef ft = LLVMDIBuilderCreateSubroutineType(
		h->di, h->di_file, types, 2, LLVMDIFlagPrototyped);
	LLVMMetadataRef fp = LLVMDIBuilderCreatePointerType(h->di, ft, 64, 64, 0,
							    "", 0);
	int n = 0;
	while (abi->members[n])
		n++;
	LLVMMetadataRef members[32];
	for (int i = 0; i < n && i < 32; i++)
		members[i] = LLVMDIBuilderCreateMemberType(
			h->di, h->di_file, abi->members[i], strlen(abi->members[i]),
			h->di_file, 0, 64, 64, (uint64_t)i * 64, LLVMDIFlagZero, fp);
	const char *sn = abi->struct_name;
	LLVMMetadataRef st = LLVMDIBuilderCreateStructType(
		h->di, h->di_file, sn, strlen(sn), h->di_file, 0, (uint64_t)n * 64,
		64, LLVMDIFlagZero, NULL, members, (unsigned)(n < 32 ? n : 32), 0,
		NULL, "", 0);
	attach_dbg(h, g, var, st);
}
