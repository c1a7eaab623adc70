#!/usr/bin/env bash
# Preview tracks for a catalog as a Slurm job array: one shard per array task.
#
#   sbatch --array=0-15 docs/catalog/slurm-array.sh videos.txt /shared/previews
#
# Every task runs the same command; filmstrip reads its shard from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT.
# Resubmitting the same array after a failure, a cancellation or a node loss makes only what is not complete, and
# an item a still-running task is making is waited for, never made twice. To resubmit only some tasks, give the
# array's size, so that each task id stays its shard:
#
#   sbatch --array=2,5 docs/catalog/slurm-array.sh videos.txt /shared/previews --shards 16
#
# Shared storage: the list, the videos (or their URLs) and the catalog folder must be at the same paths on every
# node, on a file system with atomic rename within a folder and flock visible across nodes (NFSv4, Lustre mounted
# with -o flock, GPFS, CephFS). An item's outputs are named by its path, size and modification time, so a video
# mounted at another path on another node is another item.
#
#SBATCH --job-name=filmstrip-catalog
#SBATCH --cpus-per-task=2
#SBATCH --mem=2G
#SBATCH --time=04:00:00
#SBATCH --output=filmstrip-catalog-%A_%a.log
set -euo pipefail

list=${1:?usage: sbatch --array=0-N slurm-array.sh LIST DIR [filmstrip catalog generate options]}
catalog=${2:?usage: sbatch --array=0-N slurm-array.sh LIST DIR [filmstrip catalog generate options]}
shift 2

# Exit status 1 (some items failed; they are recorded in DIR/results) marks the task FAILED in sacct, so a
# failed video is visible from the scheduler as well. --cores comes from SLURM_CPUS_PER_TASK.
exec "${FILMSTRIP:-filmstrip}" catalog generate "$list" --output "$catalog" \
    --formats "${FILMSTRIP_FORMATS:-vtt,hls}" --jobs "${FILMSTRIP_JOBS:-2}" --json "$@"
