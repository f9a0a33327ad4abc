#!/usr/bin/env bash
# Builds the server image once (linux/arm64, apps/server/Dockerfile) and pushes it to one ECR
# repository in the home region; every service of every region pulls it from there (Fargate
# pulls across regions with the task execution role SST gives each service). Prints the image
# URI to use as FLAPLAB_IMAGE:
#
#   export FLAPLAB_IMAGE=$(infra/build-image.sh)
#   npx sst deploy --stage multiregion
#
# Needs Docker with buildx and AWS credentials. The tag is the commit (plus "-dirty" and a hash of
# the changes when the tree has uncommitted changes), so a deploy of the same tree reuses the image.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
region="${FLAPLAB_DEFAULT_REGION:-us-east-1}"
repository="${FLAPLAB_IMAGE_REPOSITORY:-flaplab-server}"

tag="$(git rev-parse --short=12 HEAD)"
if [ -n "$(git status --porcelain)" ]; then
  tag="$tag-dirty-$( (git diff HEAD; git ls-files --others --exclude-standard) | sha256sum | cut -c1-8)"
fi

account="$(aws sts get-caller-identity --query Account --output text)"
registry="$account.dkr.ecr.$region.amazonaws.com"
aws ecr describe-repositories --region "$region" --repository-names "$repository" >/dev/null 2>&1 \
  || aws ecr create-repository --region "$region" --repository-name "$repository" >/dev/null
aws ecr get-login-password --region "$region" | docker login --username AWS --password-stdin "$registry" >&2

image="$registry/$repository:$tag"
if ! docker manifest inspect "$image" >/dev/null 2>&1; then
  start=$(date +%s)
  docker buildx build --platform linux/arm64 -f apps/server/Dockerfile -t "$image" --push . >&2
  echo "built and pushed $image in $(($(date +%s) - start)) s" >&2
fi
echo "$image"
