# make -f Makefile -f print.mk print-VAR: the value of VAR in a configured
# Makefile of an application's test tree (test/apps/ runners).
print-%:
	@echo $($*)
