# learn/: the shared decision-tree library (CART as scikit-learn's DecisionTreeClassifier, the
# smallest-good-tree search, class labels by peak finding as SciPy's find_peaks, tree export to
# DOT, a C header and JSON). Plain C with libm and jansson; the tools (mcts, seer) link it.
LEARN_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard learn/*.c))
$(B)/liblearn.a: $(LEARN_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
LEARN_LIBS := $(B)/liblearn.a $(B)/libcommon.a -ljansson -lm

TEST_DIRS += learn
TEST_LIBS_learn := $(LEARN_LIBS)
