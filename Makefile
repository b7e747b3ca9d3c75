EXTENSION = uldp
# The client library (src/local/, libc only): linked into the extension,
# which provides its host (random bits, memory), and built again below
# without any PostgreSQL include path as src/local/libuldp_local.a and
# src/local/uldp-local (the build stays under src/).
LOCAL_MODULES = error json xoshiro hadamard round summary grids report \
	reportjson shuffle exactnoise
MODULE_big = uldp
OBJS = src/uldp.o src/random.o src/noise.o src/params.o src/tablemem.o src/handover.o src/sharedpass.o src/usertable.o src/usermerge.o src/rowbound.o src/shardquery.o src/shardgroups.o src/shardrewrite.o src/shardrows.o src/pairunpack.o src/releasekind.o src/userstate.o src/fixedsum.o src/partvalues.o src/radixsort.o \
	src/range.o src/release.o src/budget.o \
	src/protect.o src/gate.o src/safe_expr.o src/safe_arith.o src/safe_time.o \
	src/safe_text.o \
	src/accountant.o src/rotation.o src/highdim.o src/vecstate.o \
	src/vecrelease.o src/sgd.o src/abovethreshold.o src/gaussvec.o src/sgdproblem.o src/sgdwinsorized.o src/sgdphased.o src/sgdphases.o src/sgdaccelerated.o src/sgdrobust.o src/concentration.o src/sgdoutlier.o src/statement.o src/dimension.o \
	src/budgetadmin.o src/dropguard.o src/grid.o \
	src/clipping.o src/count.o src/quantstate.o src/quantile.o \
	src/siphash.o src/groupnames.o src/groupbound.o src/groupcalls.o src/keymemo.o src/grouping.o src/selection.o src/finalagg.o src/groupjit.o src/releaseworkers.o \
	src/ldphost.o src/ldpround.o src/ldpreport.o src/ldpdecode.o src/ldpresult.o src/ldpshuffle.o \
	$(patsubst %,src/local/%.o,$(LOCAL_MODULES))
DATA = sql/uldp--0.1.sql sql/uldp--0.1--0.2.sql sql/uldp--0.2--0.3.sql \
	sql/uldp--0.3--0.4.sql sql/uldp--0.4--0.5.sql sql/uldp--0.5--0.6.sql \
	sql/uldp--0.6--0.7.sql sql/uldp--0.7--0.8.sql sql/uldp--0.8--0.9.sql
REGRESS = uldp_mean uldp_range uldp_parallel uldp_budget uldp_errors uldp_protect uldp_ledger uldp_vector uldp_sgd uldp_sgd_accelerated uldp_sgd_robust uldp_sgd_outlier uldp_gate uldp_statement uldp_count uldp_sum uldp_quantile uldp_local uldp_grouped
REGRESS_OPTS = --inputdir=.

PG_CPPFLAGS = -I$(srcdir)/src
# uldp_shard (src/shard/) defines the same functions as the sources both
# compile: each module calls its own copies (-Bsymbolic), whichever a
# backend loaded first.
LDFLAGS_SL += -Wl,-Bsymbolic
override PG_CFLAGS += -std=gnu99 -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers

LOCAL_LIB = src/local/libuldp_local.a
LOCAL_TOOL = src/local/uldp-local
EXTRA_CLEAN = $(LOCAL_LIB) $(LOCAL_TOOL) src/local/*.client.o

# Track header dependencies, which PostgreSQL's build of PGXS may not: a
# changed header recompiles what includes it.  The dependency files are
# build output, kept under src/.
override autodepend = yes
override DEPDIR = src/.deps

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The client objects are compiled with libc's headers only, which proves
# that src/local/ needs nothing from PostgreSQL; -Werror follows the
# extension's build (test/lib/common.sh passes PG_CFLAGS=-Werror).
ULDP_VERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(srcdir)/uldp.control)
LOCAL_CFLAGS = -std=c99 -O2 -g -Wall -Wextra -Wmissing-prototypes \
	-Wdeclaration-after-statement -Werror=vla -D_GNU_SOURCE \
	$(filter -Werror,$(PG_CFLAGS))
LOCAL_CLIENT_OBJS = $(patsubst %,src/local/%.client.o,$(LOCAL_MODULES) client_host)

src/local/%.client.o: src/local/%.c $(wildcard $(srcdir)/src/local/*.h)
	$(CC) $(LOCAL_CFLAGS) -c -o $@ $<

src/local/cli.client.o: LOCAL_CFLAGS += -DULDP_VERSION='"$(ULDP_VERSION)"'
src/local/cli.client.o: uldp.control

$(LOCAL_LIB): $(LOCAL_CLIENT_OBJS)
	rm -f $@
	$(AR) crs $@ $^

$(LOCAL_TOOL): src/local/cli.client.o $(LOCAL_LIB)
	$(CC) $(LOCAL_CFLAGS) -o $@ $^ -lm

all: $(LOCAL_LIB) $(LOCAL_TOOL)

install: install-local
install-local: $(LOCAL_LIB) $(LOCAL_TOOL)
	$(MKDIR_P) '$(DESTDIR)$(bindir)' '$(DESTDIR)$(libdir)' '$(DESTDIR)$(includedir)/uldp'
	$(INSTALL_PROGRAM) $(LOCAL_TOOL) '$(DESTDIR)$(bindir)/'
	$(INSTALL_DATA) $(LOCAL_LIB) '$(DESTDIR)$(libdir)/'
	$(INSTALL_DATA) $(srcdir)/src/local/uldp_local.h '$(DESTDIR)$(includedir)/uldp/'

uninstall: uninstall-local
uninstall-local:
	rm -f '$(DESTDIR)$(bindir)/uldp-local' '$(DESTDIR)$(libdir)/libuldp_local.a' \
		'$(DESTDIR)$(includedir)/uldp/uldp_local.h'

.PHONY: install-local uninstall-local

# The shard-side extension uldp_shard (src/shard/, doc/scale-out.md): its
# own module, control file and script, built and installed with uldp.
# PG_CONFIG and PG_CFLAGS given on the command line reach it through make.
SHARD_DIR = src/shard

all: all-shard
all-shard:
	$(MAKE) -C $(SHARD_DIR)

install: install-shard
install-shard: all-shard
	$(MAKE) -C $(SHARD_DIR) install

uninstall: uninstall-shard
uninstall-shard:
	$(MAKE) -C $(SHARD_DIR) uninstall

clean: clean-shard
clean-shard:
	$(MAKE) -C $(SHARD_DIR) clean

.PHONY: all-shard install-shard uninstall-shard clean-shard
