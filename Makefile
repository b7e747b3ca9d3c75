EXTENSION = uldp
MODULE_big = uldp
OBJS = src/uldp.o src/random.o src/noise.o src/params.o src/userstate.o \
	src/range.o src/release.o src/budget.o \
	src/protect.o src/gate.o src/safe_expr.o src/safe_arith.o src/safe_time.o \
	src/safe_text.o \
	src/accountant.o src/rotation.o src/highdim.o src/vecstate.o \
	src/vecrelease.o src/sgd.o src/abovethreshold.o src/gaussvec.o src/sgdproblem.o src/sgdwinsorized.o src/sgdphased.o src/sgdphases.o src/sgdaccelerated.o src/sgdrobust.o src/concentration.o src/sgdoutlier.o src/statement.o src/dimension.o \
	src/budgetadmin.o src/dropguard.o src/grid.o \
	src/clipping.o src/count.o src/quantstate.o src/quantile.o \
	src/local/exactnoise.o \
	src/ldphost.o src/ldpround.o src/ldpreport.o src/ldpdecode.o src/ldpresult.o src/ldpshuffle.o
DATA = sql/uldp--0.1.sql sql/uldp--0.1--0.2.sql sql/uldp--0.2--0.3.sql \
	sql/uldp--0.3--0.4.sql sql/uldp--0.4--0.5.sql sql/uldp--0.5--0.6.sql \
	sql/uldp--0.6--0.7.sql
REGRESS = uldp_mean uldp_range uldp_parallel uldp_budget uldp_errors uldp_protect uldp_ledger uldp_vector uldp_sgd uldp_sgd_accelerated uldp_sgd_robust uldp_sgd_outlier uldp_gate uldp_statement uldp_count uldp_sum uldp_quantile
REGRESS_OPTS = --inputdir=.

PG_CPPFLAGS = -I$(srcdir)/src
override PG_CFLAGS += -std=gnu99 -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
