/* `lscat mcts rules`: learn the rules from a results file and write them (rules.txt, tree.dot,
 * tree.png through Graphviz where installed); --evaluate classifies another file with them.
 * Returns an exit code; messages go to stderr. */
#ifndef LSCAT_MCTS_CMD_RULES_H
#define LSCAT_MCTS_CMD_RULES_H

#include "mcts/rules.h"

int mcts_cmd_rules(const char *results, const char *out_dir, const struct mcts_rules_options *o,
                   const char *evaluate);

#endif
