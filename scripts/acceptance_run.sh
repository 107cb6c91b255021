# Sourced by the acceptance scripts (ball_box_acceptance.sh,
# points_acceptance.sh) once OUT, EPOCHS, IMPULSE and ACCEPT_NAME (the
# script's name, for messages) are set. Defines and exports
#   run NAME MODEL TRAIN-OPTIONS...
# which trains MODEL on $OUT/train.npz (later options, e.g. another --data,
# win) into $OUT/NAME/model.npz, resuming from its training state, then
# evaluates it on $OUT/test.npz (eval.json, predictions.npz). A finished
# step (its output file exists) is not redone.
run() {
    local name=$1 model=$2
    shift 2
    local dir="$OUT/$name"
    mkdir -p "$dir"
    if [ ! -f "$dir/model.npz" ]; then
        local resume=()
        [ -f "$dir/model.npz.state.npz" ] && resume=(--resume "$dir/model.npz.state.npz")
        "$IMPULSE" train "$model" --data "$OUT/train.npz" --epochs "$EPOCHS" --quiet "$@" "${resume[@]}" \
            -o "$dir/model.npz" > "$dir/train.out" 2>&1 || { echo "$ACCEPT_NAME: $name: training failed" >&2; cat "$dir/train.out" >&2; return 1; }
    fi
    [ -f "$dir/eval.json" ] || { "$IMPULSE" eval --model "$dir/model.npz" --data "$OUT/test.npz" --json \
        --predictions "$dir/predictions.npz" > "$dir/eval.json.tmp" && mv "$dir/eval.json.tmp" "$dir/eval.json"; }
    echo "$ACCEPT_NAME: $name done" >&2
}
export -f run
export OUT EPOCHS IMPULSE ACCEPT_NAME
