// TrialRoot: the trial folder check shared by Trial and TrialOutline.
#include "trial_root.h"

namespace litmus::internal {

StatusOr<std::string> CheckedTrialRoot(Env* env, std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  LITMUS_ASSIGN_OR_RETURN(bool is_dir, env->IsDirectory(root));
  if (!is_dir) {
    LITMUS_ASSIGN_OR_RETURN(bool exists, env->FileExists(root));
    if (exists) return InvalidArgumentError(root + ": not a folder; a trial is a folder");
    return NotFoundError(root + ": no such trial folder");
  }
  return root;
}

}  // namespace litmus::internal
