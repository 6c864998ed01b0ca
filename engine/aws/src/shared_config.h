// Reading of the AWS shared configuration files (~/.aws/credentials and ~/.aws/config, INI
// format) for the credential chain and region resolution. Internal to litmus_aws.
// Thread-safety: pure functions over the files' current contents.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "litmus/status.h"

namespace litmus::aws::internal {

// key -> value of one profile.
using Profile = std::map<std::string, std::string>;

// The profile litmus uses: AWS_PROFILE, else AWS_DEFAULT_PROFILE, else "default".
std::string SelectedProfileName();
// True when the profile was named by AWS_PROFILE / AWS_DEFAULT_PROFILE (so its absence is an error).
bool ProfileNamedExplicitly();

// AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials; AWS_CONFIG_FILE, else ~/.aws/config
// ("" when HOME is unset and no variable is given).
std::string CredentialsFilePath();
std::string ConfigFilePath();

// Parses INI text: "[section]" headers, "key = value" lines, '#' and ';' comments; indented
// lines (sub-sections such as "s3 =\n  addressing_style = path") are skipped. In the config
// file, sections are "[profile NAME]" or "[default]"; `config_style` maps those to NAME.
std::map<std::string, Profile> ParseIni(const std::string& text, bool config_style);

// The named profile of a file, or nullopt when the file or the profile is absent.
std::optional<Profile> ReadProfile(const std::string& path, const std::string& name, bool config_style);

}  // namespace litmus::aws::internal
